// hunt15_go.go - a Go program with cgo, for tests/run-hunt15.sh: C.malloc'd
// blocks from Go (goMalloc, in main and in goroutines locked to their
// threads, which end with them) and malloc'd blocks from C functions Go
// calls (c_make via c_keep); one block dropped (definitely lost). Prints
// "site NAME SIZE" for each block. With "abort", ends in C's abort() (a
// kernel core with GOTRACEBACK=crash; else Go's runtime takes the signal and
// exits 2); else os.Exit(0), which makes the exit_group system call itself:
// libheapann's exit snapshot never runs.
package main

/*
#include <stdlib.h>
#include <string.h>

void *kept[8];  // not static: gcc keeps the stores

__attribute__((noinline)) void *c_make(size_t n)
{
	void *p = malloc(n); // MARK:cmake
	memset(p, 1, n);
	return p;
}

__attribute__((noinline)) void c_keep(int i, size_t n)
{
	kept[i] = c_make(n); // MARK:ckeep
}
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"
)

var held []unsafe.Pointer

//go:noinline
func goMalloc(n int) unsafe.Pointer {
	return C.malloc(C.size_t(n)) // MARK:gomalloc
}

func main() {
	for i := 0; i < 3; i++ {
		held = append(held, goMalloc(1000+i))
		fmt.Printf("site gomalloc %d\n", 1000+i)
	}
	for i := 0; i < 2; i++ {
		C.c_keep(C.int(i), C.size_t(2000+i))
		fmt.Printf("site ckeep %d\n", 2000+i)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			runtime.LockOSThread()
			p := goMalloc(3000 + g)
			mu.Lock()
			held = append(held, p)
			mu.Unlock()
		}(g)
	}
	wg.Wait()
	for g := 0; g < 4; g++ {
		fmt.Printf("site gomalloc %d\n", 3000+g)
	}
	goMalloc(555) // MARK:golost dropped
	fmt.Println("site golost 555")
	if len(os.Args) > 1 && os.Args[1] == "abort" {
		C.abort()
	}
	os.Exit(0)
}
