// SPDX-License-Identifier: GPL-2.0
/*
 * pinclaw-loopback: a GPIO chip whose outputs are wired to its inputs, so that tests can see real
 * edge events travel through gpiolib and the GPIO character device on kernels that ship neither
 * gpio-sim nor gpio-mockup (Debian 12's). It is a minimal gpio-sim: no configfs, one fixed layout.
 *
 *   LOOP0..LOOP3  drivable lines (output or input)
 *   LOOP4..LOOP7  input-only lines; LOOP(k+4) reads what LOOP(k) drives
 *
 * A drivable line configured as input drives nothing; the wire then reads 0, as if pulled down.
 * When the level of a wire changes, the input line raises an edge interrupt. Interrupts are
 * delivered from irq_work (hard-irq context) through the chip's own irq domain, which is what
 * gpio-sim does through irq_sim; gpiolib-cdev's edge detector then sees a genuine interrupt.
 */
#include <linux/bitops.h>
#include <linux/gpio/driver.h>
#include <linux/irq.h>
#include <linux/irq_work.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/spinlock.h>

#define LOOP_LINES 8
#define LOOP_WIRES (LOOP_LINES / 2)
/* The wires' levels live in the low LOOP_WIRES bits of a word. */
#define LOOP_WIRE_MASK (BIT(LOOP_WIRES) - 1)

struct loopback {
	struct gpio_chip gc;
	/* Raw: the gpio_chip callbacks may be called from atomic context. */
	raw_spinlock_t lock;
	unsigned long driven;	/* bit k: level LOOP(k) is set to */
	unsigned long output;	/* bit k: LOOP(k) is configured as output */
	/* Per input line: trigger type, unmasked, edge waiting for delivery. Bit = line offset. */
	unsigned int trigger[LOOP_LINES];
	unsigned long unmasked;
	unsigned long pending;
	struct irq_work deliver;
};

static const char *const loop_names[LOOP_LINES] = {
	"LOOP0", "LOOP1", "LOOP2", "LOOP3", "LOOP4", "LOOP5", "LOOP6", "LOOP7",
};

static struct platform_device *loop_pdev;
static struct loopback *loop;

static bool is_input_only(unsigned int offset)
{
	return offset >= LOOP_WIRES;
}

/* Levels of the four wires: what each drivable line puts on its wire. Caller holds lock. */
static unsigned long wire_levels(const struct loopback *lb)
{
	return lb->driven & lb->output & LOOP_WIRE_MASK;
}

/*
 * Queues an edge for every input line whose wire changed in a direction it listens to. Caller
 * holds lock; delivery happens later in irq_work because gpiolib may call us with the caller's
 * own locks held, and interrupt handlers must not run inside those.
 */
static void queue_edges(struct loopback *lb, unsigned long before, unsigned long after)
{
	unsigned long changed = before ^ after;
	unsigned int wire;

	for_each_set_bit(wire, &changed, LOOP_WIRES) {
		unsigned int line = wire + LOOP_WIRES;
		bool rising = after & BIT(wire);
		unsigned int want = rising ? IRQ_TYPE_EDGE_RISING : IRQ_TYPE_EDGE_FALLING;

		if (test_bit(line, &lb->unmasked) && (lb->trigger[line] & want))
			set_bit(line, &lb->pending);
	}
	if (lb->pending)
		irq_work_queue(&lb->deliver);
}

static void deliver_edges(struct irq_work *work)
{
	struct loopback *lb = container_of(work, struct loopback, deliver);
	unsigned int line;

	for (line = LOOP_WIRES; line < LOOP_LINES; line++)
		if (test_and_clear_bit(line, &lb->pending))
			generic_handle_domain_irq(lb->gc.irq.domain, line);
}

/* Applies a change to the drivable lines and raises the edges it causes on the wires. */
static void drive(struct loopback *lb, unsigned int offset, int output, int value)
{
	unsigned long flags, before;

	raw_spin_lock_irqsave(&lb->lock, flags);
	before = wire_levels(lb);
	if (output >= 0)
		__assign_bit(offset, &lb->output, output);
	if (value >= 0)
		__assign_bit(offset, &lb->driven, value);
	queue_edges(lb, before, wire_levels(lb));
	raw_spin_unlock_irqrestore(&lb->lock, flags);
}

static int loop_get(struct gpio_chip *gc, unsigned int offset)
{
	struct loopback *lb = gpiochip_get_data(gc);
	unsigned long flags;
	int value;

	raw_spin_lock_irqsave(&lb->lock, flags);
	if (is_input_only(offset))
		value = !!(wire_levels(lb) & BIT(offset - LOOP_WIRES));
	else
		value = !!(wire_levels(lb) & BIT(offset));
	raw_spin_unlock_irqrestore(&lb->lock, flags);
	return value;
}

static void loop_set(struct gpio_chip *gc, unsigned int offset, int value)
{
	if (!is_input_only(offset))
		drive(gpiochip_get_data(gc), offset, -1, !!value);
}

static int loop_direction_output(struct gpio_chip *gc, unsigned int offset, int value)
{
	/* Driving the input end of a wire would short two outputs together. */
	if (is_input_only(offset))
		return -EPERM;
	drive(gpiochip_get_data(gc), offset, 1, !!value);
	return 0;
}

static int loop_direction_input(struct gpio_chip *gc, unsigned int offset)
{
	if (!is_input_only(offset))
		drive(gpiochip_get_data(gc), offset, 0, -1);
	return 0;
}

static int loop_get_direction(struct gpio_chip *gc, unsigned int offset)
{
	struct loopback *lb = gpiochip_get_data(gc);

	if (is_input_only(offset) || !test_bit(offset, &lb->output))
		return GPIO_LINE_DIRECTION_IN;
	return GPIO_LINE_DIRECTION_OUT;
}

static void loop_irq_mask(struct irq_data *d)
{
	struct gpio_chip *gc = irq_data_get_irq_chip_data(d);
	struct loopback *lb = gpiochip_get_data(gc);
	irq_hw_number_t hwirq = irqd_to_hwirq(d);

	clear_bit(hwirq, &lb->unmasked);
	gpiochip_disable_irq(gc, hwirq);
}

static void loop_irq_unmask(struct irq_data *d)
{
	struct gpio_chip *gc = irq_data_get_irq_chip_data(d);
	struct loopback *lb = gpiochip_get_data(gc);
	irq_hw_number_t hwirq = irqd_to_hwirq(d);

	gpiochip_enable_irq(gc, hwirq);
	set_bit(hwirq, &lb->unmasked);
}

static int loop_irq_set_type(struct irq_data *d, unsigned int type)
{
	struct gpio_chip *gc = irq_data_get_irq_chip_data(d);
	struct loopback *lb = gpiochip_get_data(gc);

	/* Edges only: nothing here could keep a level interrupt asserted and then clear it. */
	if (type & ~IRQ_TYPE_EDGE_BOTH)
		return -EINVAL;
	lb->trigger[irqd_to_hwirq(d)] = type;
	return 0;
}

static const struct irq_chip loop_irqchip = {
	.name = "pinclaw-loopback",
	.irq_mask = loop_irq_mask,
	.irq_unmask = loop_irq_unmask,
	.irq_set_type = loop_irq_set_type,
	.flags = IRQCHIP_IMMUTABLE,
	GPIOCHIP_IRQ_RESOURCE_HELPERS,
};

/* Only the input ends of the wires can interrupt. */
static void loop_irq_valid_mask(struct gpio_chip *gc, unsigned long *valid_mask, unsigned int ngpios)
{
	bitmap_clear(valid_mask, 0, LOOP_WIRES);
}

static int __init loop_init(void)
{
	struct gpio_irq_chip *girq;
	int ret;

	loop = kzalloc(sizeof(*loop), GFP_KERNEL);
	if (!loop)
		return -ENOMEM;
	raw_spin_lock_init(&loop->lock);
	/* Hard-irq context even on PREEMPT_RT, where generic_handle_domain_irq() requires it. */
	loop->deliver = IRQ_WORK_INIT_HARD(deliver_edges);

	/* A device to parent the chip, so it shows up under /sys/bus/gpio like a real one. */
	loop_pdev = platform_device_register_simple("pinclaw-loopback", PLATFORM_DEVID_NONE, NULL, 0);
	if (IS_ERR(loop_pdev)) {
		ret = PTR_ERR(loop_pdev);
		goto free;
	}

	loop->gc.label = "pinclaw-loopback";
	loop->gc.parent = &loop_pdev->dev;
	loop->gc.owner = THIS_MODULE;
	loop->gc.base = -1;
	loop->gc.ngpio = LOOP_LINES;
	loop->gc.names = loop_names;
	loop->gc.can_sleep = false;
	loop->gc.get = loop_get;
	loop->gc.set = loop_set;
	loop->gc.direction_input = loop_direction_input;
	loop->gc.direction_output = loop_direction_output;
	loop->gc.get_direction = loop_get_direction;

	girq = &loop->gc.irq;
	gpio_irq_chip_set_chip(girq, &loop_irqchip);
	girq->handler = handle_simple_irq;
	girq->default_type = IRQ_TYPE_NONE;
	girq->init_valid_mask = loop_irq_valid_mask;

	ret = gpiochip_add_data(&loop->gc, loop);
	if (ret)
		goto unregister;
	return 0;

unregister:
	platform_device_unregister(loop_pdev);
free:
	kfree(loop);
	return ret;
}

static void __exit loop_exit(void)
{
	gpiochip_remove(&loop->gc);
	irq_work_sync(&loop->deliver);
	platform_device_unregister(loop_pdev);
	kfree(loop);
}

module_init(loop_init);
module_exit(loop_exit);

MODULE_DESCRIPTION("GPIO chip with outputs wired to inputs, for pinclaw's VM tests");
MODULE_LICENSE("GPL");
