/* sample.c: prototypes, definitions, types and macros. */
#include <stddef.h>

#define BUFFER_SIZE 4096
#define MAX(a, b) \
    ((a) > (b) ? (a) : (b))

struct point {
    int x;
    int y;
};

typedef struct node {
    struct node *next;
} node_t;

enum color { RED, GREEN, BLUE };

int add(int a, int b);

/* Adds two integers. */
int add(int a, int b)
{
    return a + b;  /* the sum */
}

static const char *
describe(enum color c)
{
    switch (c) {
    case RED:
        return "red";
    default:
        return "other";
    }
}

int (*handler)(int);
