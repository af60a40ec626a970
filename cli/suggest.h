/* "Did you mean" hints for the command line: the core's matcher
 * (src/suggest.h), which the readers use for column names too. */
#ifndef ST_CLI_SUGGEST_H
#define ST_CLI_SUGGEST_H

#include "../src/suggest.h"

#define cli_suggest st_suggest

#endif
