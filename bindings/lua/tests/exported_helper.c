/*
 * exported_helper.c - the negative control of lua.plain_build: a binding
 * helper declared the way main's were (no static, no prefix, no visibility),
 * which a plain `cc -shared` exports. plain_build.sh must name it.
 */
#include "context.h"

bool state_forgotten(lua_State *L);

bool state_forgotten(lua_State *L) {
  return L != NULL;
}
