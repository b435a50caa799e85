/*
 * rewrite_if.c: the `if (condition) { ... }` block of the rewrite module,
 * nginx's way: the block is an implicit nameless location nested in its
 * server or location, with its own confs for every module (merged from
 * the parent like any location), so that add_header, root, error_page...
 * written inside apply when the condition holds: the script then switches
 * r->loc_conf to the block's confs (in a location; in a server the block
 * may hold only script directives and no switch happens). The block's
 * script steps go into the parent's script, right after the `if` step.
 */
#include "rewrite.h"
#include "http_variables.h"

static const char *
invalid_condition(rx_conf_t *cf, const rx_str_t *s)
{
    rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid condition \"%.*s\"",
                      (int) s->len, s->data);
    return RX_CONF_ERROR;
}

static bool
is_str(const rx_str_t *s, const char *text)
{
    return s->len == strlen(text) && memcmp(s->data, text, s->len) == 0;
}

/* ($v op value): =, !=, ~, ~*, !~, !~* */
static const char *
parse_comparison(rx_conf_t *cf, rx_http_rewrite_if_t *cond, const rx_str_t *op,
    const rx_str_t *value)
{
    if (is_str(op, "=") || is_str(op, "!=")) {
        cond->type = RX_REWRITE_COND_EQ;
        cond->negative = op->data[0] == '!';
        return rx_http_compile_complex_value(cf, value, &cond->value) == RX_OK
               ? RX_CONF_OK : RX_CONF_ERROR;
    }
    if (is_str(op, "~") || is_str(op, "~*") || is_str(op, "!~")
        || is_str(op, "!~*")) {
        cond->type = RX_REWRITE_COND_REGEX;
        cond->negative = op->data[0] == '!';
        return rx_http_regex_compile(cf, value, op->data[op->len - 1] == '*',
                                     &cond->re, &cond->names) == RX_OK
               ? RX_CONF_OK : RX_CONF_ERROR;
    }
    rx_conf_log_error(RX_LOG_EMERG, cf, 0, "unexpected \"%.*s\" in condition",
                      (int) op->len, op->data);
    return RX_CONF_ERROR;
}

/*
 * The condition in cf->args: "(" and ")" may stand alone or stick to the
 * first and last words, as the tokenizer leaves them: "($a", "=", "b)" or
 * "(", "$a", ")" (nginx's ngx_http_rewrite_if_condition).
 */
static const char *
parse_condition(rx_conf_t *cf, rx_http_rewrite_if_t *cond)
{
    rx_str_t  *value = cf->args->elts, *p, name;
    rx_uint_t  cur, last = cf->args->nelts - 1;
    rx_int_t   index;

    if (value[1].len == 0 || value[1].data[0] != '(') {
        return invalid_condition(cf, &value[1]);
    }
    if (value[last].len == 0 || value[last].data[value[last].len - 1] != ')') {
        return invalid_condition(cf, &value[last]);
    }
    if (value[1].len == 1) {
        cur = 2;
    } else {
        cur = 1;
        value[1].data++;
        value[1].len--;
    }
    if (value[last].len == 1) {
        last--;
    } else {
        value[last].len--;
    }
    if (cur > last) {
        return invalid_condition(cf, &value[1]);
    }
    p = &value[cur];

    if (p->len > 1 && p->data[0] == '$') {
        if (cur != last && cur + 2 != last) {
            return invalid_condition(cf, p);
        }
        name.data = p->data + 1;
        name.len = p->len - 1;
        index = rx_http_get_variable_index(cf, &name);
        if (index == RX_ERROR) {
            return RX_CONF_ERROR;
        }
        cond->index = (rx_uint_t) index;
        if (cur == last) {
            cond->type = RX_REWRITE_COND_VAR;
            return RX_CONF_OK;
        }
        return parse_comparison(cf, cond, &value[cur + 1], &value[last]);
    }

    if ((p->len == 2 && p->data[0] == '-')
        || (p->len == 3 && p->data[0] == '!' && p->data[1] == '-')) {
        if (cur + 1 != last || !strchr("fdex", p->data[p->len - 1])) {
            return invalid_condition(cf, p);
        }
        cond->type = RX_REWRITE_COND_FILE;
        cond->file_op = p->data[p->len - 1];
        cond->negative = p->data[0] == '!';
        return rx_http_compile_complex_value(cf, &value[last], &cond->value)
               == RX_OK ? RX_CONF_OK : RX_CONF_ERROR;
    }
    return invalid_condition(cf, p);
}


const char *
rx_http_rewrite_if(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_rewrite_conf_t *rcf = conf, *block;
    rx_http_rewrite_step_t *step, *steps;
    rx_http_conf_ctx_t     *ctx;
    rx_uint_t               at;
    rx_conf_t               saved;
    const char             *rv;

    ctx = rx_http_nameless_location(cf);
    step = ctx ? rx_http_rewrite_add_step(cf, rcf) : NULL;
    if (step == NULL) {
        return RX_CONF_ERROR;
    }
    step->type = RX_REWRITE_IF;
    at = rcf->steps->nelts - 1;
    if (parse_condition(cf, &step->u.cond) != RX_CONF_OK) {
        return RX_CONF_ERROR;
    }
    step->u.cond.loc_conf = cf->cmd_type == RX_HTTP_SRV_CONF ? NULL
                                                              : ctx->loc_conf;

    /* the block's directives append to this script */
    block = ctx->loc_conf[rx_http_rewrite_module.ctx_index];
    block->steps = rcf->steps;

    saved = *cf;
    cf->ctx = ctx;
    cf->cmd_type = cf->cmd_type == RX_HTTP_SRV_CONF ? RX_HTTP_SIF_CONF
                                                    : RX_HTTP_LIF_CONF;
    rv = rx_conf_parse(cf, NULL);
    *cf = saved;
    if (rv != RX_CONF_OK) {
        return rv;
    }

    /* the array may have moved while the block grew it: by index */
    steps = rcf->steps->elts;
    steps[at].u.cond.next = rcf->steps->nelts;
    block->steps = NULL;
    return RX_CONF_OK;
}
