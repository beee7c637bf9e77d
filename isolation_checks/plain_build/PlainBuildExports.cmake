# nsalloc_plain_build_exports(<name> <entry> <label> <compiler argument>...):
# ctest isolation.plain_build.<name> builds a binding's module with a plain
# `cc -shared -fPIC <compiler arguments>` (none of the project's visibility
# flags) and checks that it exports <entry> only (exports.sh). Its negative
# control, isolation.plain_build.<name>.negative_control, adds a helper that
# is neither static nor hidden (leaky_helper.c) and must see it reported.
# The module is ${NSALLOC_PLAIN_BUILD_DIR}/<name>/module.so, for tests that go
# on to load it (fixture: the test isolation.plain_build.<name>).
set(NSALLOC_PLAIN_BUILD_DIR ${CMAKE_BINARY_DIR}/plain_build)
function(nsalloc_plain_build_exports name entry label)
  set(script ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/exports.sh)
  set(out ${NSALLOC_PLAIN_BUILD_DIR}/${name})
  add_test(NAME isolation.plain_build.${name}
           COMMAND sh ${script} ${entry} ${out}/module.so ${CMAKE_C_COMPILER} ${ARGN})
  add_test(NAME isolation.plain_build.${name}.negative_control
           COMMAND sh ${script} ${entry} ${out}/leaky.so ${CMAKE_C_COMPILER} ${ARGN}
                   ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/leaky_helper.c)
  set_tests_properties(isolation.plain_build.${name}.negative_control PROPERTIES
    PASS_REGULAR_EXPRESSION "exported: leaky_helper \\(only ${entry} may be\\)")
  set_tests_properties(isolation.plain_build.${name} isolation.plain_build.${name}.negative_control
    PROPERTIES LABELS "isolation;${label}" TIMEOUT 60)
endfunction()
