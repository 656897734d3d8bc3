//! The tally: what each scenario's exchanges got, and the failures, kept for the report.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError};

use crate::peer::Fail;

/// Failure descriptions kept for the report.
const MAX_FAILURES: usize = 40;

#[derive(Default)]
pub struct Tally {
    pub right: u64,
    pub wrong: u64,
    pub missing: u64,
    /// Outcomes with no answer to check (resets, refused slots), by name.
    pub other: BTreeMap<&'static str, u64>,
}

/// What kind of exchanges a scenario makes, for the checks.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Valid,
    Refusal,
    Abort,
}

#[derive(Default)]
pub struct Book {
    pub tallies: Mutex<BTreeMap<&'static str, Tally>>,
    pub failures: Mutex<Vec<String>>,
    pub failure_count: AtomicU64,
}

impl Book {
    pub fn with(&self, sc: &'static str, f: impl FnOnce(&mut Tally)) {
        let mut t = self.tallies.lock().unwrap_or_else(PoisonError::into_inner);
        f(t.entry(sc).or_default());
    }

    pub fn right(&self, sc: &'static str) {
        self.with(sc, |t| t.right += 1);
    }

    pub fn other(&self, sc: &'static str, what: &'static str) {
        self.with(sc, |t| *t.other.entry(what).or_default() += 1);
    }

    pub fn fail(&self, sc: &'static str, fail: &Fail, context: &str) {
        let missing = fail.is_missing();
        self.with(sc, |t| {
            if missing {
                t.missing += 1;
            } else {
                t.wrong += 1;
            }
        });
        self.note(format!(
            "{sc}: {} ({fail}) {context}",
            if missing { "missing" } else { "wrong" }
        ));
    }

    pub fn note(&self, line: String) {
        self.failure_count.fetch_add(1, Relaxed);
        let mut f = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        if f.len() < MAX_FAILURES {
            eprintln!("soak_client: {line}");
            f.push(line);
        }
    }
}
