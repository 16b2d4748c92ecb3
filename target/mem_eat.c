/*
 * mem_eat: how much memory can an application get? Allocates CHUNK bytes at a
 * time, touches every page (so the kernel must really provide it) and prints the
 * running total after each chunk, unbuffered, so the last total survives the OOM
 * killer. Ends when malloc fails ("malloc failed") or the process is killed.
 *
 *   mem_eat [chunk_kb]     default 64 kB
 *
 * Output lines, as in the 2005 study:  Got total = 9240576 = 9024kB
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long chunk_kb = argc > 1 ? atol(argv[1]) : 64;
	size_t chunk, total = 0;
	long page = sysconf(_SC_PAGESIZE);
	char line[96];

	if (chunk_kb <= 0) {
		fprintf(stderr, "usage: mem_eat [chunk_kb > 0]\n");
		return 2;
	}
	chunk = (size_t)chunk_kb * 1024;
	for (;;) {
		char *p = malloc(chunk);
		size_t i;
		int n;

		if (!p) {
			n = snprintf(line, sizeof line, "malloc failed after total = %zu = %zukB\n",
				     total, total / 1024);
			write(1, line, n);
			return 1;
		}
		for (i = 0; i < chunk; i += page)
			p[i] = 1;
		total += chunk;
		n = snprintf(line, sizeof line, "Got total = %zu = %zukB\n", total, total / 1024);
		write(1, line, n);	/* unbuffered: the last line survives a kill */
	}
}
