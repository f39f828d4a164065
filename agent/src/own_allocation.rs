//! Objects the agent allocates itself, on a program thread (natives.rs sizes a class from an instance it
//! makes with JNI `AllocObject`): while one is being made, the callbacks that would count or sample the
//! program's allocations (the `AllocObject` wrapper, SampledObjectAlloc) leave it alone. Without this the
//! wrapper would count the instance, through `HeapProxy.vmAlloc` and the class probe that sizes its class
//! again: a recursion that ends only when the stack does.

use std::cell::Cell;

thread_local! {
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
}

/// While alive, the current thread's allocations are the agent's own.
pub struct OwnAllocation(());

impl OwnAllocation {
    pub fn begin() -> OwnAllocation {
        ACTIVE.with(|c| c.set(true));
        OwnAllocation(())
    }
}

impl Drop for OwnAllocation {
    fn drop(&mut self) {
        ACTIVE.with(|c| c.set(false));
    }
}

/// Whether the current thread is allocating for the agent.
pub fn active() -> bool {
    ACTIVE.with(|c| c.get())
}
