# Native x86-64 build against musl (Debian: musl-tools); the programs run
# directly, with musl's dynamic loader (dlclose unloads nothing).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER musl-gcc)
