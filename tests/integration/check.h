/* SPDX-License-Identifier: MIT */
/*
 * Only tests/abi/ still reaches the checks by this path (its meson.build
 * adds include_directories('../integration')). The checks themselves are
 * tests/common/check.h; drop this file once tests/abi names tests/common.
 */
#include "../common/check.h"
