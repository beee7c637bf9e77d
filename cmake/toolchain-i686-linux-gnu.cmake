# Cross build for 32-bit x86 Linux (Debian: gcc-i686-linux-gnu,
# libc6-dev-i386-cross; not gcc-multilib's -m32, which conflicts with the
# aarch64 cross compiler).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR i686)
set(CMAKE_C_COMPILER i686-linux-gnu-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/i686-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# ctest runs the programs natively (an x86-64 kernel runs i386 code) through
# the cross C library's loader, not under qemu-i386: qemu 7.2 hangs in the
# child of fork() in a dynamically linked i386 program, and the core tests
# observe aborts in forked children.
set(CMAKE_CROSSCOMPILING_EMULATOR /usr/i686-linux-gnu/lib/ld-linux.so.2 --library-path
                                  /usr/i686-linux-gnu/lib)
