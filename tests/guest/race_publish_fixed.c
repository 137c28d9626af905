/* race_publish_fixed with the bug removed (FIXED): see race_publish.c. */
#define FIXED 1
#include "race_publish.c"
