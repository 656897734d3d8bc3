use std::fmt;

/// Why a pool could not hand out a block.
///
/// Every variant is recoverable: nothing was allocated or leaked, and the same call can succeed
/// later (after blocks come back, or with a smaller size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The request is larger than the pool's largest block size.
    TooLarge {
        /// Bytes asked for.
        requested: usize,
        /// The largest block size the pool has.
        largest: usize,
    },
    /// No free block, and growing by a slab would pass the pool's bound
    /// (the class's `max_slabs` or the pool's `max_bytes`).
    Exhausted {
        /// Block size of the class that is out of blocks.
        block_size: usize,
    },
    /// `try_get` found no free block; it never grows the pool.
    Empty {
        /// Block size of the class that is out of blocks.
        block_size: usize,
    },
    /// The global allocator refused a new slab.
    OutOfMemory {
        /// Size of the slab allocation that failed.
        slab_bytes: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::TooLarge { requested, largest } => write!(
                f,
                "requested {requested} bytes but the largest block is {largest} bytes"
            ),
            Error::Exhausted { block_size } => write!(
                f,
                "pool exhausted: no free {block_size}-byte block and the pool is at its bound"
            ),
            Error::Empty { block_size } => {
                write!(f, "no free {block_size}-byte block (try_get does not grow)")
            }
            Error::OutOfMemory { slab_bytes } => {
                write!(f, "the allocator refused a {slab_bytes}-byte slab")
            }
        }
    }
}

impl std::error::Error for Error {}

/// Why a pool configuration was rejected by [`Builder::build`](crate::Builder::build).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// A block size is zero, not a multiple of 64, or above 1 GiB.
    BadBlockSize(usize),
    /// Two classes have the same block size.
    DuplicateClass(usize),
    /// A class has zero blocks per slab, or a slab would be larger than 4 GiB.
    BadBlocksPerSlab {
        /// Block size of the class.
        block_size: usize,
        /// The rejected blocks-per-slab count.
        blocks_per_slab: usize,
    },
    /// A class's `max_slabs` is zero or below its `prealloc_slabs`.
    BadMaxSlabs {
        /// Block size of the class.
        block_size: usize,
    },
    /// The preallocated slabs alone exceed `max_bytes`.
    PreallocOverMax {
        /// Bytes the preallocated slabs need.
        prealloc_bytes: usize,
        /// The configured bound.
        max_bytes: usize,
    },
    /// More than 255 size classes.
    TooManyClasses,
    /// The eviction share is not in `0.0..=1.0`.
    BadEvictShare,
    /// The global allocator refused a preallocated slab.
    OutOfMemory,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ConfigError::BadBlockSize(size) => write!(
                f,
                "block size {size} is invalid: it must be a non-zero multiple of 64 up to 1 GiB"
            ),
            ConfigError::DuplicateClass(size) => write!(f, "block size {size} is configured twice"),
            ConfigError::BadBlocksPerSlab {
                block_size,
                blocks_per_slab,
            } => write!(
                f,
                "class {block_size}: {blocks_per_slab} blocks per slab is invalid \
                 (at least 1, and a slab of at most 4 GiB)"
            ),
            ConfigError::BadMaxSlabs { block_size } => write!(
                f,
                "class {block_size}: max_slabs must be at least 1 and at least prealloc_slabs"
            ),
            ConfigError::PreallocOverMax {
                prealloc_bytes,
                max_bytes,
            } => write!(
                f,
                "preallocated slabs need {prealloc_bytes} bytes, more than max_bytes {max_bytes}"
            ),
            ConfigError::TooManyClasses => write!(f, "a pool holds at most 255 size classes"),
            ConfigError::BadEvictShare => write!(f, "the eviction share must be within 0.0..=1.0"),
            ConfigError::OutOfMemory => write!(f, "the allocator refused a preallocated slab"),
        }
    }
}

impl std::error::Error for ConfigError {}
