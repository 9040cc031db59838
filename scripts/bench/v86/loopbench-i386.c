/* loopbench.c for the v86 peer image: this directory's rt.h first (its RT_H guard keeps the x86_64 rt.h out) */
#include "rt.h"
#include "../../../test/conformance/programs/loopbench.c"
