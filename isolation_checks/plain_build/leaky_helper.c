/*
 * leaky_helper.c - the negative control of the plain-build export checks: a
 * helper shared between a binding's files the way they were written before
 * (neither static nor hidden). Built into a module, it must be reported.
 */
int leaky_helper(int x);

int leaky_helper(int x) {
  return x + 1;
}
