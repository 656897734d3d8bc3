//! What the head fuzz targets share: the configuration a mode byte picks, and the check that a
//! parse's verdict depends neither on how its input is split nor on the backend.

use std::fmt::Debug;

use bufslab_http::{Backend, Config, Error};

/// What a target's parse of one input is given: the configuration and the number of header
/// slots its mode byte picks, the mode byte itself (for target-specific choices), the input,
/// and where to cut it (growing prefixes, then the whole).
pub struct Run<'a> {
    pub cfg: Config,
    pub slots: usize,
    // Read by the response target only (for the request's method); each target compiles
    // this module on its own.
    #[allow(dead_code)]
    pub mode: u8,
    pub buf: &'a [u8],
    pub cuts: &'a [usize],
}

/// The fuzz target's body: `data` is a mode byte and an input. Asserts that `parse` gives the
/// whole-buffer result also for every prefix in turn (inputs up to 1 KiB, to keep executions
/// fast) and for two split points taken from the input, that every backend this CPU runs gives
/// it too, whole and at those two points, and that an error has one of `statuses` and a
/// message.
pub fn split_independent<T: PartialEq + Debug>(
    data: &[u8],
    statuses: &[u16],
    parse: impl Fn(&Run<'_>) -> Result<T, Error>,
) {
    let Some((&mode, buf)) = data.split_first() else {
        return;
    };
    let (cfg, slots) = config(mode);
    let on = |cfg: Config, cuts: &[usize]| {
        parse(&Run {
            cfg,
            slots,
            mode,
            buf,
            cuts,
        })
    };
    let run = |cuts: &[usize]| on(cfg, cuts);
    let want = run(&[]);
    if let Err(e) = &want {
        assert!(statuses.contains(&e.status()), "{e:?}");
        assert!(!e.to_string().is_empty());
    }
    let len = buf.len();
    if len <= 1024 {
        let every: Vec<usize> = (0..len).collect();
        assert_eq!(run(&every), want);
    }
    let a = (mode as usize * 7) % (len + 1);
    let b = (a + len / 3) % (len + 1);
    let mut two = [a, b];
    two.sort_unstable();
    assert_eq!(run(&two), want);
    for &backend in Backend::ALL.iter().filter(|b| b.is_supported()) {
        let cfg = cfg.with_backend(backend);
        assert_eq!(on(cfg, &[]), want, "the {backend} backend disagrees");
        assert_eq!(
            on(cfg, &two),
            want,
            "the {backend} backend disagrees at {two:?}"
        );
    }
}

/// The configuration the mode byte's low bits pick (bare LF, a small head limit, a short
/// request line, few field lines) and the number of header slots (bit 4).
fn config(mode: u8) -> (Config, usize) {
    let cfg = Config::DEFAULT
        .with_allow_bare_lf(mode & 1 != 0)
        .with_max_head_bytes(if mode & 2 != 0 {
            64 + (mode as usize) * 4
        } else {
            16 * 1024
        })
        .with_max_request_line(if mode & 4 != 0 {
            8 + (mode as usize)
        } else {
            8 * 1024
        })
        .with_max_headers(if mode & 8 != 0 { 3 } else { 100 });
    let slots = if mode & 16 != 0 { 2 } else { 64 };
    (cfg, slots)
}
