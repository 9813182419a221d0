/* oracle.c: C in several house styles, checked against universal-ctags. */
#include <stdlib.h>
#include <string.h>

#define UNUSED(x) (void)(x)

struct buffer {
    char *data;
    size_t len;
    size_t cap;
};

static int grow(struct buffer *b, size_t need);

/* GNU style: the return type on a line of its own. */
static int
grow (struct buffer *b, size_t need)
{
  if (b->cap >= need)
    return 0;
  char *p = realloc (b->data, need);
  if (!p)
    return -1;
  b->data = p;
  b->cap = need;
  return 0;
}

int buffer_append(struct buffer *b, const char *s,
                  size_t n) {
    if (grow(b, b->len + n) != 0) {
        return -1;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    return 0;
}

void
buffer_free(struct buffer *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

static inline size_t buffer_len(const struct buffer *b) { return b->len; }

#ifdef WITH_DEBUG
static void dump(const struct buffer *b)
{
    UNUSED(b);
}
#else
static void dump(const struct buffer *b) { UNUSED(b); }
#endif

typedef int (*compare_fn)(const void *, const void *);

static int (*pick(int which))(const void *, const void *)
{
    UNUSED(which);
    return NULL;
}

char *
strdup_or_die(const char *s)
{
    char *copy = strdup(s);
    if (copy == NULL)
        abort();
    return copy;
    /* not reached */
}

int main(int argc, char **argv)
{
    struct buffer b = {0};
    UNUSED(argc);
    UNUSED(argv);
    buffer_append(&b, "x", 1);
    dump(&b);
    buffer_free(&b);
    return 0;
}
