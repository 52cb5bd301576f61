// xrt_kernel.h: test mock, see ../xrt_mock.h
#pragma once
#include "../xrt_mock.h"
