# cmake -DCORE_DIR=... -DHEADER=... -DOUT_DIR=... -P Amalgamate.cmake
# Inlines internal.h and every core file that core/nsalloc.c includes, in that
# order, into one nsalloc.c; copies the public header beside it.
file(MAKE_DIRECTORY ${OUT_DIR})
file(STRINGS ${CORE_DIR}/nsalloc.c unity_lines)
set(out "/* nsalloc amalgamation: generated from core/ - do not edit. */\n")
string(APPEND out "#include \"nsalloc.h\"\n")
file(READ ${CORE_DIR}/prim/prim.h prim_h)
foreach(part internal.h)
  file(READ ${CORE_DIR}/${part} text)
  string(REPLACE "#include \"nsalloc.h\"\n" "" text "${text}")
  string(REPLACE "#include \"prim/prim.h\"\n" "/* ---- prim/prim.h ---- */\n${prim_h}" text "${text}")
  string(APPEND out "/* ---- ${part} ---- */\n${text}\n")
endforeach()
# Core files are inlined; the conditionals choosing the platform seam
# (prim/unix.c or prim/windows.c) are kept around them.
foreach(line IN LISTS unity_lines)
  if(line MATCHES "^#include \"([a-z_/]+\\.c)\"$")
    set(part ${CMAKE_MATCH_1})
    file(READ ${CORE_DIR}/${part} text)
    string(REGEX REPLACE "#include \"(\\.\\./)?internal\\.h\"\n" "" text "${text}")
    string(APPEND out "/* ---- ${part} ---- */\n${text}\n")
  elseif(line MATCHES "^#(if|elif|else|endif)")
    string(APPEND out "${line}\n")
  endif()
endforeach()
file(WRITE ${OUT_DIR}/nsalloc.c "${out}")
configure_file(${HEADER} ${OUT_DIR}/nsalloc.h COPYONLY)
