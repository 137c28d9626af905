/* race_two_sections_fixed with the bug removed (FIXED): see race_two_sections.c. */
#define FIXED 1
#include "race_two_sections.c"
