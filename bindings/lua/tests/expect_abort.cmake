# cmake -DHOST=nsalloc-lua -DCHUNK=code -DPATTERN=regex -P expect_abort.cmake
# Runs `HOST -e CHUNK`, which must die of SIGABRT with PATTERN on stderr.
execute_process(COMMAND ${HOST} -e ${CHUNK} OUTPUT_VARIABLE output ERROR_VARIABLE errors
                RESULT_VARIABLE status)
if(NOT status MATCHES "abort")
  message(FATAL_ERROR "expected an abort, got '${status}'; stderr:\n${errors}")
endif()
if(NOT errors MATCHES "${PATTERN}")
  message(FATAL_ERROR "stderr does not match '${PATTERN}':\n${errors}")
endif()
message(STATUS "aborted as expected: ${errors}")
