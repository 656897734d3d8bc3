//! Random numbers: xorshift64*, enough to vary sizes and split points reproducibly.

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi.saturating_sub(lo) as u64 + 1)) as usize
    }

    pub fn percent(&mut self, p: u64) -> bool {
        self.next() % 100 < p
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(n + 8);
        while v.len() < n {
            v.extend_from_slice(&self.next().to_le_bytes());
        }
        v.truncate(n);
        v
    }

    /// An echo body size: mostly small, often over one 4 KiB block, now and then up to `max`.
    pub fn body_len(&mut self, max: usize) -> usize {
        match self.next() % 10 {
            0..=3 => self.range(0, 512),
            4..=6 => self.range(513, 8192),
            7 | 8 => self.range(8193, 128 * 1024),
            _ => self.range(128 * 1024, max),
        }
    }
}
