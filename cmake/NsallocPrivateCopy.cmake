# nsalloc_add_private_copy(<target> PREFIX <prefix> [TLS_MODEL <model>] [DEFINITIONS <def>...])
#
# Compiles a private copy of the nsalloc core into <target>: every API name
# becomes <prefix><name>, nothing is exported (hidden visibility), and the
# copy gets its own TLS variable, thread-exit key, segment map and options.
# Code of <target> calls the canonical names (nsalloc_malloc, ...) and the
# header maps them to the prefix.
#
# TLS_MODEL: "gnu2" (TLSDESC; default on x86-64, fast and dlopen-safe),
# "global-dynamic", or "initial-exec" (static TLS; only for executables and
# modules loaded at startup: it sets DF_STATIC_TLS).
if(NOT DEFINED NSALLOC_CORE_SOURCE)
  set(NSALLOC_CORE_SOURCE ${CMAKE_CURRENT_LIST_DIR}/../core/nsalloc.c)
  set(NSALLOC_INCLUDE_DIR ${CMAKE_CURRENT_LIST_DIR}/../sdk/include)
endif()

# The core is C: a C++-only project (project(x CXX)) would otherwise leave the
# copy's nsalloc.c uncompiled and fail to link. (enable_language must run at
# file scope, which is where find_package includes this file.)
get_property(nsalloc_enabled_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
if(NOT "C" IN_LIST nsalloc_enabled_languages)
  enable_language(C)
endif()

# Compile options and definitions selecting a TLS model (used by every target
# that compiles the core, private copies and the libraries alike).
function(nsalloc_tls_flags out_options out_definitions model)
  if(WIN32) # GCC for mingw-w64 has one TLS scheme, emulated TLS (core/prim/prim.h)
    set(${out_options} "" PARENT_SCOPE)
    set(${out_definitions} "" PARENT_SCOPE)
    return()
  endif()
  if(model STREQUAL "")
    # TLSDESC needs GCC on x86-64 (clang before 19 has no -mtls-dialect=gnu2).
    if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64" AND CMAKE_C_COMPILER_ID STREQUAL "GNU")
      set(model gnu2)
    else()
      set(model global-dynamic)
    endif()
  endif()
  if(model STREQUAL "gnu2")
    set(${out_options} -ftls-model=global-dynamic -mtls-dialect=gnu2 PARENT_SCOPE)
  elseif(model STREQUAL "global-dynamic" OR model STREQUAL "initial-exec")
    set(${out_options} -ftls-model=${model} PARENT_SCOPE)
  else()
    message(FATAL_ERROR "nsalloc: unknown TLS model '${model}'")
  endif()
  # The copy names its TLS model itself (core/prim/prim.h); static TLS is an
  # explicit opt-in it must know about.
  if(model STREQUAL "initial-exec")
    set(${out_definitions} NSALLOC_TLS_INITIAL_EXEC=1 PARENT_SCOPE)
  else()
    set(${out_definitions} "" PARENT_SCOPE)
  endif()
endfunction()

function(nsalloc_add_private_copy target)
  cmake_parse_arguments(ARG "" "PREFIX;TLS_MODEL" "DEFINITIONS" ${ARGN})
  if(NOT ARG_PREFIX)
    message(FATAL_ERROR "nsalloc_add_private_copy(${target}): PREFIX is required")
  endif()
  nsalloc_tls_flags(tls_options tls_definitions "${ARG_TLS_MODEL}")
  target_sources(${target} PRIVATE ${NSALLOC_CORE_SOURCE})
  target_compile_features(${target} PRIVATE c_std_11)
  target_include_directories(${target} PRIVATE ${NSALLOC_INCLUDE_DIR})
  # The TLS flags apply to the whole target: they only change how its TLS
  # variables are reached, and one model per module is what the loader sees.
  target_compile_options(${target} PRIVATE ${tls_options})
  target_compile_definitions(${target} PRIVATE NSALLOC_PREFIX=${ARG_PREFIX} NSALLOC_PRIVATE=1
                             ${tls_definitions} ${ARG_DEFINITIONS})
  set_target_properties(${target} PROPERTIES C_VISIBILITY_PRESET hidden)
  find_package(Threads REQUIRED)
  target_link_libraries(${target} PRIVATE Threads::Threads)
endfunction()
