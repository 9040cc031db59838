/* <linux/init.h> for kprobe-debug modules: the init / exit section markers (a module's .init* sections are freed once its init returned). */
#ifndef _KP_LINUX_INIT_H
#define _KP_LINUX_INIT_H

#define __init __attribute__((__section__(".init.text")))
#define __initdata __attribute__((__section__(".init.data")))
#define __initconst __attribute__((__section__(".init.rodata")))
#define __exit
#define __exitdata

#endif
