/*
 * empty_gif.c: nginx's empty_gif: a location that answers every GET and
 * HEAD with a 1x1 transparent GIF (43 bytes, image/gif), as trackers and
 * spacer images want. Other methods get 405.
 */
#include "http.h"

/* GIF89a, 1x1, a two-colour table, colour 0 transparent, one pixel of it */
static const unsigned char empty_gif[] = {
    'G', 'I', 'F', '8', '9', 'a',
    0x01, 0x00, 0x01, 0x00,             /* width 1, height 1 */
    0x80, 0x00, 0x00,                   /* global table of 2 colours */
    0x00, 0x00, 0x00, 0xff, 0xff, 0xff, /* black, white */
    0x21, 0xf9, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00, /* colour 0 transparent */
    0x2c, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, /* image */
    0x02, 0x02, 0x44, 0x01, 0x00,       /* LZW data: one pixel of colour 0 */
    0x3b                                /* trailer */
};

_Static_assert(sizeof(empty_gif) == 43, "the empty GIF is 43 bytes");

static const char *set_empty_gif(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);

static const rx_command_t empty_gif_commands[] = {
    { "empty_gif", RX_HTTP_LOC_CONF | RX_CONF_NOARGS, set_empty_gif,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    rx_null_command
};

static const rx_http_module_t empty_gif_ctx = { NULL };

rx_module_t rx_http_empty_gif_module = {
    "rx_http_empty_gif_module", 0, 0, RX_HTTP_MODULE, &empty_gif_ctx,
    empty_gif_commands, NULL, NULL, NULL, NULL
};

static rx_int_t
empty_gif_handler(void *data)
{
    rx_http_request_t *r = data;
    rx_str_t           type = rx_string("image/gif");
    rx_str_t           body = { sizeof(empty_gif), (char *) empty_gif };

    if (!(r->method & (RX_HTTP_GET | RX_HTTP_HEAD))) {
        return RX_HTTP_NOT_ALLOWED;
    }
    r->headers_out.last_modified_time = 23349600;  /* nginx's: 1970-09-28 */
    return rx_http_send_response(r, RX_HTTP_OK, &type, &body);
}

static const char *
set_empty_gif(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_core_loc_conf_t *clcf = rx_http_conf_get_module_loc_conf(cf,
                                       rx_http_core_module);

    (void) cmd;
    (void) conf;
    clcf->handler = empty_gif_handler;
    return RX_CONF_OK;
}
