# Cross build for 32-bit ARM Linux, hard-float (Debian armhf: ARMv7-A with
# VFPv3; gcc-arm-linux-gnueabihf, libc6-dev-armhf-cross); ctest runs the
# programs under qemu-user-static.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7l)
set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# Emulation is treated like valgrind, as for aarch64 (see that toolchain file).
set(CMAKE_CROSSCOMPILING_EMULATOR env NSALLOC_UNDER_VALGRIND=1 qemu-arm-static -L /usr/arm-linux-gnueabihf)
