//! Pool configuration: size classes, bounds, local cache size, eviction share.

use crate::error::ConfigError;
use crate::slab::BLOCK_ALIGN;

/// One size class: blocks of one size, carved from slabs of `blocks_per_slab` blocks.
///
/// Defaults: 32 blocks per slab, 1 slab preallocated, at most 256 slabs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassConfig {
    pub(crate) block_size: usize,
    pub(crate) blocks_per_slab: usize,
    pub(crate) prealloc_slabs: usize,
    pub(crate) max_slabs: usize,
}

impl ClassConfig {
    /// A class of `block_size`-byte blocks (a non-zero multiple of 64, up to 1 GiB).
    pub const fn new(block_size: usize) -> Self {
        ClassConfig {
            block_size,
            blocks_per_slab: 32,
            prealloc_slabs: 1,
            max_slabs: 256,
        }
    }

    /// Blocks carved from each slab (one allocation each).
    pub const fn blocks_per_slab(mut self, n: usize) -> Self {
        self.blocks_per_slab = n;
        self
    }

    /// Slabs allocated when the pool is built; trimming never goes below this floor.
    pub const fn prealloc_slabs(mut self, n: usize) -> Self {
        self.prealloc_slabs = n;
        self
    }

    /// The most slabs this class may hold. The free list is sized for all of their blocks up
    /// front (24 bytes per block for the queue, 16 for the stack).
    pub const fn max_slabs(mut self, n: usize) -> Self {
        self.max_slabs = n;
        self
    }

    pub(crate) fn slab_bytes(&self) -> usize {
        self.block_size * self.blocks_per_slab
    }

    /// What a local cache keeps of this class unless the builder says otherwise.
    pub(crate) fn default_local_capacity(&self) -> usize {
        ((1 << 20) / self.block_size).clamp(4, 256)
    }

    pub(crate) fn max_blocks(&self) -> usize {
        self.blocks_per_slab * self.max_slabs
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let size = self.block_size;
        if size == 0 || size % BLOCK_ALIGN != 0 || size > 1 << 30 {
            return Err(ConfigError::BadBlockSize(size));
        }
        let slab_ok = self.blocks_per_slab > 0
            && self
                .block_size
                .checked_mul(self.blocks_per_slab)
                .is_some_and(|bytes| bytes <= 1 << 32);
        if !slab_ok {
            return Err(ConfigError::BadBlocksPerSlab {
                block_size: size,
                blocks_per_slab: self.blocks_per_slab,
            });
        }
        if self.max_slabs == 0
            || self.max_slabs < self.prealloc_slabs
            || self.max_blocks() > u32::MAX as usize
        {
            return Err(ConfigError::BadMaxSlabs { block_size: size });
        }
        Ok(())
    }
}

/// Builds a [`Pool`](crate::Pool). Start from [`Pool::builder`](crate::Pool::builder).
///
/// With no class added, the pool has one: 4096-byte blocks, 32 per slab. Every setting has a
/// default, and new settings arrive as new methods, so code written against this builder keeps
/// compiling.
///
/// # Examples
///
/// ```
/// use bufslab::{ClassConfig, Pool};
///
/// let builder = Pool::builder()
///     .class(ClassConfig::new(4096).blocks_per_slab(32).prealloc_slabs(4).max_slabs(64))
///     .class(ClassConfig::new(64 * 1024).blocks_per_slab(8).prealloc_slabs(0).max_slabs(16))
///     .max_bytes(64 << 20)  // both classes together
///     .local_capacity(64)   // blocks a thread's cache keeps per class
///     .evict_share(0.5);    // what `evict_idle` releases of the surplus
/// let queue = builder.clone().build()?;                     // `Pool<QueueFreeList>`
/// assert_eq!(queue.block_sizes().collect::<Vec<_>>(), [4096, 65536]);
/// # #[cfg(feature = "stack")] {
/// // The other strategy, same config (`stack` feature, on by default).
/// let stack = builder.build_with::<bufslab::StackFreeList>()?;
/// assert_eq!(stack.stats().allocated_bytes, 4 * 32 * 4096);
/// # }
/// # Ok::<(), bufslab::ConfigError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Builder {
    pub(crate) classes: Vec<ClassConfig>,
    pub(crate) max_bytes: usize,
    pub(crate) local_capacity: Option<usize>,
    pub(crate) evict_share: f64,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            classes: Vec::new(),
            max_bytes: usize::MAX,
            local_capacity: None,
            evict_share: 0.25,
        }
    }
}

impl Builder {
    /// Adds a size class. Classes may be added in any order; sizes must differ.
    pub fn class(mut self, class: ClassConfig) -> Self {
        self.classes.push(class);
        self
    }

    /// Bounds the bytes of slab memory across all classes (default: only the classes' own
    /// `max_slabs`). `get` returns [`Error::Exhausted`](crate::Error::Exhausted) rather than
    /// grow past it.
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// Blocks a [`LocalCache`](crate::LocalCache) keeps per class. By default about 1 MiB
    /// per class: 256 blocks of 4 KiB, 16 of 64 KiB (at least 4, at most 256). It refills and
    /// flushes half of that at a time. 0 turns local caching off.
    pub fn local_capacity(mut self, blocks: usize) -> Self {
        self.local_capacity = Some(blocks);
        self
    }

    /// The share of surplus slabs each [`Pool::evict_idle`](crate::Pool::evict_idle) call releases (default 0.25).
    pub fn evict_share(mut self, share: f64) -> Self {
        self.evict_share = share;
        self
    }

    /// The builder with its classes sorted and checked, as a pool is built from it.
    pub(crate) fn validated(mut self) -> Result<Builder, ConfigError> {
        if self.classes.is_empty() {
            self.classes.push(ClassConfig::new(4096));
        }
        if self.classes.len() > u8::MAX as usize {
            return Err(ConfigError::TooManyClasses);
        }
        self.classes.sort_by_key(|c| c.block_size);
        for class in &self.classes {
            class.validate()?;
        }
        if let Some(pair) = self
            .classes
            .windows(2)
            .find(|w| w[0].block_size == w[1].block_size)
        {
            return Err(ConfigError::DuplicateClass(pair[0].block_size));
        }
        if !(0.0..=1.0).contains(&self.evict_share) {
            return Err(ConfigError::BadEvictShare);
        }
        let prealloc_bytes = self
            .classes
            .iter()
            .map(|c| c.slab_bytes().saturating_mul(c.prealloc_slabs))
            .fold(0usize, usize::saturating_add);
        if prealloc_bytes > self.max_bytes {
            return Err(ConfigError::PreallocOverMax {
                prealloc_bytes,
                max_bytes: self.max_bytes,
            });
        }
        Ok(self)
    }
}
