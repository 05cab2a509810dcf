// hunt17_ga.rs - a Rust program with its own #[global_allocator], a counting
// wrapper of System, for tests/run-hunt17-review.sh: make_vec's 500 bytes and
// make_box's 72 must read as allocated there (by Vec's and Box's code that it
// called), not at <Counting as GlobalAlloc>::alloc, which rustc inlines into
// the __rust_alloc shim it inlines into the caller. Aborts with an argument.
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;
static N: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        N.fetch_add(1, Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
}

#[global_allocator]
static A: Counting = Counting;

#[inline(never)]
fn make_vec(n: usize) -> Vec<u8> {
    vec![1u8; n]
}

#[inline(never)]
fn make_box() -> Box<[u64; 9]> {
    Box::new([4u64; 9])
}

fn main() {
    let v = make_vec(500);
    let b = make_box();
    println!("{} {} {}", v.len(), b[0], N.load(Ordering::Relaxed));
    if std::env::args().count() > 1 {
        std::process::abort();
    }
}
