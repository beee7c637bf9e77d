# cmake -DCORE_DIR=... -DINCLUDE_DIR=... -DOUT_DIR=... -P Amalgamate.cmake
# Turns core/nsalloc.c into one self-contained nsalloc.c: each `#include "x"`
# of a core file is replaced by that file (internal.h with prim/prim.h
# inlined); other preprocessor lines (the feature macros, the platform choice,
# the include of a platform file not written yet) are kept as they are. The
# public headers (INCLUDE_DIR: nsalloc.h, nsalloc_uv.h) are copied beside it,
# so one -I (the output directory) serves a build from the amalgamation.
file(MAKE_DIRECTORY ${OUT_DIR})
file(STRINGS ${CORE_DIR}/nsalloc.c unity_lines)
set(out "/* nsalloc amalgamation: generated from core/ - do not edit. */\n")
foreach(line IN LISTS unity_lines)
  set(part "")
  if(line MATCHES "^#include \"([a-z_/]+\\.[ch])\"$")
    set(part ${CMAKE_MATCH_1})
  endif()
  if(part AND EXISTS ${CORE_DIR}/${part})
    file(READ ${CORE_DIR}/${part} text)
    if(part STREQUAL "internal.h")
      file(READ ${CORE_DIR}/prim/prim.h prim)
      string(REPLACE "#include \"prim/prim.h\"\n" "/* ---- prim/prim.h ---- */\n${prim}" text "${text}")
    endif()
    string(REPLACE "#include \"internal.h\"\n" "" text "${text}")
    string(APPEND out "/* ---- ${part} ---- */\n${text}\n")
  elseif(line MATCHES "^#")
    string(APPEND out "${line}\n")
  endif()
endforeach()
file(WRITE ${OUT_DIR}/nsalloc.c "${out}")
file(GLOB public_headers ${INCLUDE_DIR}/*.h)
foreach(header IN LISTS public_headers)
  get_filename_component(name ${header} NAME)
  configure_file(${header} ${OUT_DIR}/${name} COPYONLY)
endforeach()
