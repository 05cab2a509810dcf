/* t_rustname.c - Rust symbol names (sym/rustname.c): v0 and legacy names as
 * rustc's backtraces show them (the expected names are binutils' c++filt's
 * without crate disambiguators, legacy hashes and constants' types: the
 * demangler agreed with it on all 9,629 Rust names of tests/prog/hunt15_rs.rs
 * and 19,524 of librustc_driver), then names it must refuse: C++, forward and
 * self back references, truncation, unbounded nesting, a buffer too small. */
#include <string.h>

#include "check.h"
#include "sym.h"

static char out[4096];

static int is(const char *raw, const char *want)
{
	return sym_rust_demangle(raw, out, sizeof out) == 0 && strcmp(out, want) == 0;
}

static int refused(const char *raw)
{
	return sym_rust_demangle(raw, out, sizeof out) == -1;
}

int main(void)
{
	static char deep[8192];

	CHECK("v0: inherent impl, its instantiating crate left out",
	      is("_RNvMs4_NtCslNYArtu3iFV_5alloc7raw_vecNtB5_11RawVecInner15try_allocate_inCsduwmD7cSIQq_5gimli",
		 "<alloc::raw_vec::RawVecInner>::try_allocate_in"));
	CHECK("v0: a closure, a back reference",
	      is("_RNCNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal0B5_", "std::rt::lang_start_internal::{closure#0}"));
	CHECK("v0: trait impl for &dyn with an associated type",
	      is("_RNvXs0_NtNtNtCsgEmfK2I1SDS_4core3ops8function5implsRDINtB7_2FnuEp6OutputlNtNtBb_6marker4SyncNtNtNtBb_"
		 "5panic11unwind_safe13RefUnwindSafeEL_INtB7_6FnOnceuE9call_onceCsjrHSEGnQ3l9_3std",
		 "<&dyn core::ops::function::Fn<(), Output = i32> + core::marker::Sync + "
		 "core::panic::unwind_safe::RefUnwindSafe as core::ops::function::FnOnce<()>>::call_once"));
	CHECK("v0: a fn pointer type with bound lifetimes",
	      is("_RNvMs3_NtCsbEht8wFNRx7_5alloc7raw_vecINtB5_6RawVecFG1_QL2_INtNtCsaWJV4NmYLqe_18rustc_attr_parsing7context15"
		 "FinalizeContextL1_L0_EEINtNtCs8NwYtU1Mohg_4core6option6OptionNtNtNtCsdlM2EbGYIhh_9rustc_hir5attrs15"
		 "data_structures13AttributeKindEE8grow_oneBZ_",
		 "<alloc::raw_vec::RawVec<for<'a, 'b, 'c> fn(&'a mut rustc_attr_parsing::context::FinalizeContext<'b, 'c>) -> "
		 "core::option::Option<rustc_hir::attrs::data_structures::AttributeKind>>>::grow_one"));
	CHECK("v0: generic arguments of a function (turbofish), const generics",
	      is("_RINvMNtCsgEmfK2I1SDS_4core6optionINtB3_6OptionjE3mapmNCINvNtNtB5_7unicode12unicode_data11skip_searchKj16_"
		 "Kj139_Es_0EB5_",
		 "<core::option::Option<usize>>::map::<u32, core::unicode::unicode_data::skip_search<22, 313>::{closure#1}>"));
	CHECK("v0: slices and arrays", is("_RINvMNtCsgEmfK2I1SDS_4core5sliceSAcj3_13get_uncheckedjEB5_",
					   "<[[char; 3]]>::get_unchecked::<usize>"));
	CHECK("v0: a vendor suffix is left out", is("_RNvCs1234_4prog8make_buf.llvm.77", "prog::make_buf"));
	CHECK("legacy: hash left out", is("_ZN5alloc3vec9from_elem17hb587c87ec8ccbbcaE", "alloc::vec::from_elem"));
	CHECK("legacy: escapes undone",
	      is("_ZN63_$LT$u8$u20$as$u20$alloc..vec..spec_from_elem..SpecFromElem$GT$9from_elem17haa3792bd161428c7E",
		 "<u8 as alloc::vec::spec_from_elem::SpecFromElem>::from_elem"));
	CHECK("legacy: a closure and a shim",
	      is("_ZN4core3ops8function6FnOnce40call_once$u7b$$u7b$vtable.shim$u7d$$u7d$17h2f624651d254d145E",
		 "core::ops::function::FnOnce::call_once{{vtable.shim}}"));
	CHECK("legacy: an LLVM suffix is left out",
	      is("_ZN9hunt15_rs8make_buf17hf116b7e5fab83e97E.llvm.123", "hunt15_rs::make_buf"));
	CHECK("C++ is not Rust", refused("_ZN3foo3barEv") && refused("_ZN3foo3barE") && refused("_Z3fooi"));
	CHECK("legacy: a hash of 15 digits is C++'s business", refused("_ZN3foo17h0123456789abcdeE"));
	CHECK("plain C is not Rust", refused("main") && refused("_R") && refused(""));
	CHECK("v0: a forward back reference is refused", refused("_RNvB9_3foo"));
	CHECK("v0: a back reference to itself is refused", refused("_RB_"));
	CHECK("v0: a loop of back references is refused (depth bound)", refused("_RNvB_1a"));
	CHECK("v0: truncated names are refused", refused("_RNvCs1234_4prog8make_bu") && refused("_RNvCs1234_4prog"));
	CHECK("v0: an identifier longer than the name is refused", refused("_RNvC4prog99999999999999999999x"));
	memcpy(deep, "_R", 2);
	for (size_t i = 2; i < sizeof deep - 1; i++)
		deep[i] = 'N', i + 1 < sizeof deep - 1 ? (void)(deep[++i] = 'v') : (void)0;
	CHECK("v0: unbounded nesting is refused", refused(deep));
	CHECK("a buffer too small is refused, not overrun",
	      sym_rust_demangle("_RNvCs1234_4prog8make_buf", out, 8) == -1 && memchr(out, '\0', 8));
	CHECK("v0: buffer of exactly the name's size", sym_rust_demangle("_RNvCs1234_4prog8make_buf", out, 15) == 0 &&
	      !strcmp(out, "prog::make_buf"));
	return CHECK_DONE();
}
