/* tree.c -- TREE [DEPTH]: the top levels of the store's tree as Graphviz
 * DOT (commands.h). */
#include "commands.h"
#include "reply.h"
#include "session.h"

void cmd_tree(struct session *s, int depth)
{
    (void)depth;
    reply_puts(s, "Error: TREE is being written\n");
}
