/*
 * ssi_parse.c: the streaming parser of SSI commands. Text passes as
 * pieces of the input; a command ("<!--#" ... "-->", a "-->" inside a
 * quoted value not ending it) is gathered across buffers into the
 * parser's own memory, then split into its name and parameters.
 */
#include <ctype.h>
#include "ssi.h"

enum { P_TEXT = 0, P_OPEN, P_COMMAND };

static const char open_tag[] = "<!--#";

void
rx_ssi_parser_init(rx_ssi_parser_t *p, char *buf, size_t cap)
{
    memset(p, 0, sizeof(*p));
    p->cmd = buf;
    p->cap = cap;
}

void
rx_ssi_parser_held(rx_ssi_parser_t *p, rx_str_t *text)
{
    text->data = (char *) open_tag;
    text->len = p->state == P_OPEN ? p->match : 0;
    p->match = 0;
    p->state = P_TEXT;
}

/* Inside a command: bytes are kept until "-->" outside quotes. */
static bool
command_byte(rx_ssi_parser_t *p, char c)
{
    if (p->quote) {
        if (p->escape) {
            p->escape = false;
        } else if (c == '\\') {
            p->escape = true;
        } else if (c == p->quote) {
            p->quote = 0;
        }
    } else if (c == '"' || c == '\'') {
        p->quote = c;
    }
    p->tail[0] = p->tail[1];
    p->tail[1] = p->tail[2];
    p->tail[2] = c;
    if (p->len < p->cap) {
        p->cmd[p->len++] = c;
    } else {
        p->overflow = true;
    }
    return !p->quote && p->tail[0] == '-' && p->tail[1] == '-' && c == '>';
}

rx_ssi_token_t
rx_ssi_parse(rx_ssi_parser_t *p, char **pos, char *end, rx_str_t *text)
{
    char *s = *pos, *lt;

    while (s < end) {
        switch (p->state) {
        case P_TEXT:
            lt = memchr(s, '<', (size_t) (end - s));
            if (lt != s) {
                text->data = s;
                text->len = (size_t) ((lt ? lt : end) - s);
                *pos = lt ? lt : end;
                return RX_SSI_TEXT;
            }
            p->state = P_OPEN;
            p->match = 1;
            s++;
            break;
        case P_OPEN:
            if (*s != open_tag[p->match]) {
                /* not a command: what matched is text, and the byte
                 * that did not match is looked at again */
                *pos = s;
                text->data = (char *) open_tag;
                text->len = p->match;
                p->state = P_TEXT;
                p->match = 0;
                return RX_SSI_TEXT;
            }
            s++;
            if (++p->match == sizeof(open_tag) - 1) {
                p->state = P_COMMAND;
                p->len = 0;
                p->quote = 0;
                p->escape = false;
                p->overflow = false;
                memset(p->tail, 0, sizeof(p->tail));
            }
            break;
        case P_COMMAND:
            if (command_byte(p, *s++)) {
                p->len = p->len >= 3 ? p->len - 3 : 0;
                p->state = P_TEXT;
                p->match = 0;
                *pos = s;
                return RX_SSI_COMMAND;
            }
            break;
        }
    }
    *pos = s;
    return RX_SSI_MORE;
}

#define ws(c)    ((c) == ' ' || (c) == '\t' || (c) == '\r' || (c) == '\n')
#define word(c)  (((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z') \
                  || ((c) >= '0' && (c) <= '9') || (c) == '_')

/* One name="value" (or 'value'); the value stays raw (backslashes kept:
 * the commands evaluate it). */
static const char *
split_param(char **sp, char *end, size_t value_len, rx_ssi_param_t *prm)
{
    char *s = *sp, q;

    prm->name.data = s;
    while (s < end && word(*s)) {
        *s = (char) tolower((unsigned char) *s);
        s++;
    }
    prm->name.len = (size_t) (s - prm->name.data);
    if (prm->name.len == 0) {
        return "invalid parameter name in \"%s\" SSI command";
    }
    if (prm->name.len > RX_SSI_PARAM_LEN) {
        return "too long parameter name in \"%s\" SSI command";
    }
    while (s < end && ws(*s)) {
        s++;
    }
    if (s == end || *s != '=') {
        return "missing \"=\" after a parameter of \"%s\" SSI command";
    }
    for (s++; s < end && ws(*s); s++) { /* spaces */ }
    if (s == end || (*s != '"' && *s != '\'')) {
        return "a parameter value of \"%s\" SSI command is not quoted";
    }
    q = *s++;
    prm->value.data = s;
    while (s < end && *s != q) {
        s += (*s == '\\' && s + 1 < end) ? 2 : 1;
    }
    if (s >= end) {
        return "unterminated parameter value in \"%s\" SSI command";
    }
    prm->value.len = (size_t) (s - prm->value.data);
    if (prm->value.len > value_len) {
        return "too long parameter value in \"%s\" SSI command";
    }
    *sp = s + 1;
    return NULL;
}

const char *
rx_ssi_split(rx_ssi_parser_t *p, size_t value_len, rx_ssi_command_t *cmd)
{
    char       *s = p->cmd, *end = p->cmd + p->len;
    const char *err;

    cmd->nparams = 0;
    cmd->name.len = 0;
    if (p->overflow) {
        return "the SSI command is too long";
    }
    while (s < end && ws(*s)) {
        s++;
    }
    cmd->name.data = s;
    while (s < end && word(*s)) {
        *s = (char) tolower((unsigned char) *s);
        s++;
    }
    cmd->name.len = (size_t) (s - cmd->name.data);
    if (cmd->name.len == 0 || cmd->name.len > RX_SSI_COMMAND_LEN
        || (s < end && !ws(*s))) {
        return "invalid SSI command";
    }
    for (;;) {
        while (s < end && ws(*s)) {
            s++;
        }
        if (s == end) {
            return NULL;
        }
        if (cmd->nparams == RX_SSI_MAX_PARAMS) {
            return "too many SSI command parameters in \"%s\"";
        }
        err = split_param(&s, end, value_len, &cmd->params[cmd->nparams]);
        if (err) {
            return err;
        }
        cmd->nparams++;
        if (s < end && !ws(*s)) {
            return "unexpected symbol after a parameter of \"%s\" SSI command";
        }
    }
}
