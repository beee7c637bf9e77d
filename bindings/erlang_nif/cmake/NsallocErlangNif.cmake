# Building NIF libraries that bundle a private nsalloc copy, with CMake.
#
#   include(bindings/erlang_nif/cmake/NsallocErlangNif.cmake)
#   nsalloc_add_erlang_nif(my_nif PREFIX my_nif_ SOURCES c_src/my_nif.c)
#
# makes my_nif.so (no "lib" prefix, as erlang:load_nif wants) from your
# sources, the glue (nsalloc_nif.h) and a private copy of the core
# (nsalloc_add_private_copy: every nsalloc symbol is my_nif_*, hidden).
# Also finds erl, erlc and erl_nif.h: NSALLOC_ERLANG_FOUND, ERL_EXECUTABLE,
# ERLC_EXECUTABLE, ERTS_INCLUDE_DIR.
include(${CMAKE_CURRENT_LIST_DIR}/../../../cmake/NsallocPrivateCopy.cmake)
set(NSALLOC_NIF_DIR ${CMAKE_CURRENT_LIST_DIR}/..)
set(NSALLOC_NIF_SOURCES ${NSALLOC_NIF_DIR}/src/nsalloc_nif.c ${NSALLOC_NIF_DIR}/src/nsalloc_nif_funcs.c
                        ${NSALLOC_NIF_DIR}/src/nsalloc_nif_beam_source.c)

find_program(ERL_EXECUTABLE erl)
find_program(ERLC_EXECUTABLE erlc)
if(ERL_EXECUTABLE AND NOT ERTS_INCLUDE_DIR)
  execute_process(
    COMMAND ${ERL_EXECUTABLE} -noshell -eval
            "io:format(\"~s\", [filename:join([code:root_dir(), \"erts-\" ++ erlang:system_info(version), \"include\"])]), halt()."
    OUTPUT_VARIABLE erts_include RESULT_VARIABLE erl_status)
  if(erl_status EQUAL 0 AND EXISTS ${erts_include}/erl_nif.h)
    set(ERTS_INCLUDE_DIR ${erts_include} CACHE PATH "Directory of erl_nif.h")
  endif()
endif()
if(ERL_EXECUTABLE AND ERLC_EXECUTABLE AND ERTS_INCLUDE_DIR)
  set(NSALLOC_ERLANG_FOUND TRUE)
else()
  set(NSALLOC_ERLANG_FOUND FALSE)
endif()

# The glue and a NIF library's include directories, for targets that bring
# their own allocator (the negative control's stand-in) instead of a copy.
function(nsalloc_nif_glue target)
  target_sources(${target} PRIVATE ${NSALLOC_NIF_SOURCES})
  target_include_directories(${target} PRIVATE ${ERTS_INCLUDE_DIR} ${NSALLOC_NIF_DIR}/include)
  set_target_properties(${target} PROPERTIES PREFIX "" C_VISIBILITY_PRESET hidden)
  if(APPLE) # enif_* come from the VM that loads the library
    target_link_options(${target} PRIVATE -undefined dynamic_lookup)
  endif()
endfunction()

function(nsalloc_add_erlang_nif target)
  cmake_parse_arguments(ARG "" "PREFIX" "SOURCES" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES})
  nsalloc_nif_glue(${target})
  nsalloc_add_private_copy(${target} PREFIX ${ARG_PREFIX})
endfunction()

# nsalloc_erlc(<target> OUTPUT_DIR <dir> SOURCES <.erl>...): compile to <dir>.
function(nsalloc_erlc target)
  cmake_parse_arguments(ARG "" "OUTPUT_DIR" "SOURCES" ${ARGN})
  set(beams "")
  foreach(source ${ARG_SOURCES})
    get_filename_component(source ${source} ABSOLUTE) # erlc runs in the build directory
    get_filename_component(name ${source} NAME_WE)
    add_custom_command(
      OUTPUT ${ARG_OUTPUT_DIR}/${name}.beam
      COMMAND ${CMAKE_COMMAND} -E make_directory ${ARG_OUTPUT_DIR}
      COMMAND ${ERLC_EXECUTABLE} -Werror +debug_info -I ${NSALLOC_NIF_DIR}/include -o ${ARG_OUTPUT_DIR} ${source}
      DEPENDS ${source} ${NSALLOC_NIF_DIR}/include/nsalloc_nif.hrl
      COMMENT "erlc ${name}.erl")
    list(APPEND beams ${ARG_OUTPUT_DIR}/${name}.beam)
  endforeach()
  add_custom_target(${target} ALL DEPENDS ${beams})
endfunction()
