/*
 * <linux/printk.h> for kprobe-debug modules, as Linux 6.1 spells it:
 * printk() is _printk() (a kernel function formatting with Linux's
 * lib/vsprintf.c rules: %p hashed, %px raw, %pS symbol+off/size, ...;
 * emulator/kernel/printk.ts), the KERN_<LEVEL> prefixes ("\001" + level,
 * taken off the line by printk), and the pr_*() shorthands, each passing
 * its format through pr_fmt(), which a file defines before its #includes
 * to prefix its lines ("%s: " fmt, __func__ in Linux's samples).
 */
#ifndef _KP_LINUX_PRINTK_H
#define _KP_LINUX_PRINTK_H

#define KERN_SOH "\001"
#define KERN_SOH_ASCII '\001'
#define KERN_EMERG KERN_SOH "0"
#define KERN_ALERT KERN_SOH "1"
#define KERN_CRIT KERN_SOH "2"
#define KERN_ERR KERN_SOH "3"
#define KERN_WARNING KERN_SOH "4"
#define KERN_NOTICE KERN_SOH "5"
#define KERN_INFO KERN_SOH "6"
#define KERN_DEBUG KERN_SOH "7"
#define KERN_DEFAULT ""
/* continues the previous line (no new record) */
#define KERN_CONT KERN_SOH "c"

#define LOGLEVEL_EMERG 0
#define LOGLEVEL_ALERT 1
#define LOGLEVEL_CRIT 2
#define LOGLEVEL_ERR 3
#define LOGLEVEL_WARNING 4
#define LOGLEVEL_NOTICE 5
#define LOGLEVEL_INFO 6
#define LOGLEVEL_DEBUG 7

int _printk(const char *fmt, ...) __attribute__((__format__(printf, 1, 2)));
#define printk(fmt, ...) _printk(fmt, ##__VA_ARGS__)
/* the format is checked, nothing is printed */
#define no_printk(fmt, ...) ({ if (0) _printk(fmt, ##__VA_ARGS__); 0; })

#ifndef pr_fmt
#define pr_fmt(fmt) fmt
#endif

#define pr_emerg(fmt, ...) printk(KERN_EMERG pr_fmt(fmt), ##__VA_ARGS__)
#define pr_alert(fmt, ...) printk(KERN_ALERT pr_fmt(fmt), ##__VA_ARGS__)
#define pr_crit(fmt, ...) printk(KERN_CRIT pr_fmt(fmt), ##__VA_ARGS__)
#define pr_err(fmt, ...) printk(KERN_ERR pr_fmt(fmt), ##__VA_ARGS__)
#define pr_warn(fmt, ...) printk(KERN_WARNING pr_fmt(fmt), ##__VA_ARGS__)
#define pr_notice(fmt, ...) printk(KERN_NOTICE pr_fmt(fmt), ##__VA_ARGS__)
#define pr_info(fmt, ...) printk(KERN_INFO pr_fmt(fmt), ##__VA_ARGS__)
#define pr_cont(fmt, ...) printk(KERN_CONT fmt, ##__VA_ARGS__)
#ifdef DEBUG
#define pr_debug(fmt, ...) printk(KERN_DEBUG pr_fmt(fmt), ##__VA_ARGS__)
#else
#define pr_debug(fmt, ...) no_printk(KERN_DEBUG pr_fmt(fmt), ##__VA_ARGS__)
#endif

void dump_stack(void);

#endif
