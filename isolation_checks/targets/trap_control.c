/*
 * trap_control.c - NEGATIVE CONTROL for isolation.shape.no_traps: the trap
 * instruction a compiler plants where it proves undefined behaviour, built
 * for the same target so that the check is seen to find it.
 */
void iso_trap_control(void);
void iso_trap_control(void) {
  __builtin_trap();
}
