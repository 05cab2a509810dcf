// hunt15_rs.rs - a Rust program on the system allocator (std's default), for
// tests/run-hunt15.sh: Vec, Box and String blocks of known sizes from known
// functions and lines (each marked MARK:NAME), leaks by Box::leak and
// mem::forget (one with a child: definitely and indirectly lost), an interior
// pointer (possibly lost), a global (still reachable), and three std::thread
// threads each holding blocks in its live frame while it waits. Prints
// "site NAME SIZE" for each of its blocks (NAME its MARK). With "abort", ends in
// std::process::abort() (a kernel core) with the threads still waiting; else
// main returns with them waiting (the exit snapshot, memcheck).
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;

static KEPT: AtomicUsize = AtomicUsize::new(0); // a Box's address: still reachable
static INNER: AtomicUsize = AtomicUsize::new(0); // 8 bytes into a Box: possibly lost

// std::hint::black_box came with Rust 1.66; Debian 12's rustc is 1.63: the
// value goes through a volatile read, which the optimizer cannot see through
#[inline(never)]
fn black_box<T>(x: T) -> T {
    let r = unsafe { std::ptr::read_volatile(&x) };
    std::mem::forget(x);
    r
}

#[allow(dead_code)]
struct Node {
    child: Option<Box<Node>>,
    pad: [u64; 5],
}

#[inline(never)]
fn make_buf(n: usize) -> Vec<u8> {
    vec![7u8; n] // MARK:buf
}

#[inline(never)]
fn make_box() -> Box<[u64; 12]> {
    Box::new([3u64; 12]) // MARK:box
}

#[inline(never)]
fn make_string(n: usize) -> String {
    let mut s = String::with_capacity(n); // MARK:string
    // written to its capacity: bytes a block never writes keep what its chunk
    // held before, a stale pointer memcheck skips as undefined and a core
    // cannot tell from a live one (README, Known limits)
    while s.len() < n {
        s.push('h');
    }
    s
}

#[inline(never)]
fn leak_box() {
    let r: &'static mut [u64; 25] = Box::leak(Box::new([5u64; 25])); // MARK:leak
    black_box(r);
}

#[inline(never)]
fn forget_vec() {
    let v: Vec<u32> = Vec::with_capacity(50); // MARK:forget
    std::mem::forget(black_box(v));
}

#[inline(never)]
fn make_node(child: Option<Box<Node>>) -> Box<Node> {
    Box::new(Node { child, pad: [9; 5] }) // MARK:node
}

#[inline(never)]
fn forget_tree() {
    let t = make_node(Some(make_node(None)));
    std::mem::forget(black_box(t));
}

#[inline(never)]
fn keep_global() {
    let b = Box::new([1u8; 72]); // MARK:global
    KEPT.store(Box::into_raw(b) as usize, Ordering::SeqCst);
}

#[inline(never)]
fn keep_interior() {
    let b = Box::new([2u8; 88]); // MARK:interior
    INNER.store(Box::into_raw(b) as usize + 8, Ordering::SeqCst);
}

#[inline(never)]
fn worker(i: usize, ready: Arc<Barrier>) {
    let held = make_buf(3000 + i); // MARK:wbuf
    let boxed = make_box(); // MARK:wbox
    let name = make_string(500 + i); // MARK:wstring
    black_box((&held, &boxed, &name));
    ready.wait();
    loop {
        thread::park();
        black_box((&held, &boxed, &name));
    }
}

// "overflow": a stack overflow, which Rust's std reports itself (SIGSEGV on
// the guard page, its handler on a sigaltstack) when it installed its handler
#[inline(never)]
fn recurse(n: u64) -> u64 {
    let a = black_box([n; 64]);
    if n == 0 {
        0
    } else {
        recurse(n - 1) + a[3]
    }
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("overflow") {
        println!("{}", recurse(black_box(u64::MAX)));
    }
    let abort = std::env::args().nth(1).as_deref() == Some("abort");
    let held = make_buf(1000);
    let boxed = make_box();
    let name = make_string(40);
    leak_box();
    forget_vec();
    forget_tree();
    keep_global();
    keep_interior();
    println!("site buf 1000\nsite box 96\nsite string 40\nsite leak 200\nsite forget 200");
    println!("site node 48\nsite node 48\nsite global 72\nsite interior 88");
    let ready = Arc::new(Barrier::new(4));
    let mut hs = Vec::new();
    for i in 0..3 {
        let r = ready.clone();
        hs.push(thread::spawn(move || worker(i, r)));
        println!("site buf {}\nsite box 96\nsite string {}", 3000 + i, 500 + i);
    }
    ready.wait();
    // read the globals, or the compiler drops them and their blocks
    black_box((&held, &boxed, &name, &hs, KEPT.load(Ordering::SeqCst), INNER.load(Ordering::SeqCst)));
    if abort {
        std::process::abort();
    }
    std::process::exit(0); // the threads never end: no join, no drop
}
