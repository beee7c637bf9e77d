# cmake -DHOST=nsalloc-lua -DALLOC=nsalloc|system -DSCRIPT=x.lua -DEXPECTED=x.expected -P run_workload.cmake
# Runs one workload script and compares its standard output with the expected text.
execute_process(COMMAND ${HOST} --alloc=${ALLOC} ${SCRIPT}
                OUTPUT_VARIABLE output ERROR_VARIABLE errors RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${SCRIPT} (--alloc=${ALLOC}) exited with ${status}:\n${errors}")
endif()
file(READ ${EXPECTED} expected)
if(NOT output STREQUAL expected)
  message(FATAL_ERROR "${SCRIPT} (--alloc=${ALLOC}): output differs.\n--- expected\n${expected}--- got\n${output}")
endif()
message(STATUS "${SCRIPT} (--alloc=${ALLOC}): output as expected")
