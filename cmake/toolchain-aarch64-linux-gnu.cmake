# Cross build for aarch64 Linux (Debian: gcc-aarch64-linux-gnu,
# libc6-dev-arm64-cross); ctest runs the programs under qemu-user-static.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# The tests treat emulation like valgrind (NSALLOC_UNDER_VALGRIND, see
# tests/test_util.c): less work, and absolute memory bounds relaxed, since the
# emulator's own per-thread and per-dlopen memory is not the copy's.
set(CMAKE_CROSSCOMPILING_EMULATOR env NSALLOC_UNDER_VALGRIND=1 qemu-aarch64-static -L /usr/aarch64-linux-gnu)
