-- LuaRocks: `luarocks make` in a checkout builds (with CMake) and installs
-- the Lua module `nsalloc` (require "nsalloc" or lua5.4 -l nsalloc) and the
-- drop-in interpreter nsalloc-lua, each with its own private nsalloc copy.
-- docs/lua.md, docs/packaging.md.
rockspec_format = "3.0"
package = "nsalloc"
version = "0.1.0-1"
source = {
   url = "git+https://example.invalid/nsalloc.git",
   tag = "v0.1.0",
}
description = {
   summary = "nsalloc as Lua's allocator: per-state accounting and limits on a private copy",
   detailed = [[
A private copy of the nsalloc allocator as lua_Alloc: the module `nsalloc`
(tracking, limits and statistics for the running state) and the interpreter
nsalloc-lua (lua5.4 with every state on nsalloc).
]],
   homepage = "https://example.invalid/nsalloc",
   license = "MIT",
}
dependencies = {
   "lua >= 5.4, < 5.5",
}
build = {
   type = "cmake",
   variables = {
      CMAKE_BUILD_TYPE = "Release",
      CMAKE_INSTALL_PREFIX = "$(PREFIX)",
      CMAKE_INSTALL_BINDIR = "$(BINDIR)",
      NSALLOC_LUA_CMOD_DIR = "$(LIBDIR)",
      NSALLOC_LUA_ONLY = "ON",
      NSALLOC_INSTALL_SDK = "OFF",
      BUILD_TESTING = "OFF",
   },
}
