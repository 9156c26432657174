/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * An MPI program over dpdat: Open MPI's ofi MTL on dpdat;ofi_rxm (the
 * launch: mpi_run.sh). Rank 0 ping-pongs messages of 8 B, 64 KiB and
 * 1 MiB (iterations to warm up, then 1000 timed) with each rank named on
 * the command line in turn (default: rank 1), every byte of every message
 * checked; then every rank takes part in an allreduce of 4096 longs,
 * checked against the sum each rank can compute. Prints half the round
 * trip per peer and size; exits 1 on any wrong byte or sum.
 *   mpi_pingpong [-n ITERS] [PEER...]     (-n: timed round trips, 1000)
 */

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_RED	4096

static void
fill(uint8_t *b, int size, int seed)
{
	for (int i = 0; i < size; i++)
		b[i] = (uint8_t)(i * 13 + seed);
}

static int
wrong(const uint8_t *b, int size, int seed)
{
	for (int i = 0; i < size; i++)
		if (b[i] != (uint8_t)(i * 13 + seed))
			return 1;
	return 0;
}

/* Rank 0 and peer ping-pong each size; the other ranks wait. */
static int
pingpong(int rank, int peer, int iters)
{
	static const int sizes[] = { 8, 65536, 1 << 20 };
	int errors = 0;

	for (unsigned int k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		const int size = sizes[k];
		uint8_t *b = malloc((size_t)size);
		double t0 = 0;

		if (b == NULL)
			MPI_Abort(MPI_COMM_WORLD, 2);
		/* the first size's warm-up holds the connection (about
		 * 0.3 s) and the first round trips after it, about 40 us
		 * each for the first 500 or so (libfabric.md): 100 of them
		 * made the 8 B figure 16 us instead of 3 */
		const int warm = k == 0 ? 1000 : 100;

		for (int i = -warm; i < iters && (rank == 0 || rank == peer);
		     i++) {
			if (i == 0)
				t0 = MPI_Wtime();
			if (rank == 0) {
				fill(b, size, i);
				MPI_Send(b, size, MPI_BYTE, peer, 7,
					 MPI_COMM_WORLD);
				MPI_Recv(b, size, MPI_BYTE, peer, 8,
					 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				errors += wrong(b, size, i + 1);
			} else {
				MPI_Recv(b, size, MPI_BYTE, 0, 7, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				errors += wrong(b, size, i);
				fill(b, size, i + 1);
				MPI_Send(b, size, MPI_BYTE, 0, 8, MPI_COMM_WORLD);
			}
		}
		if (rank == 0)
			printf("mpi: ping-pong 0-%d %7d B: %8.2f us (half round "
			       "trip), errors %d\n", peer, size,
			       (MPI_Wtime() - t0) / iters / 2 * 1e6, errors);
		free(b);
	}
	return errors;
}

int
main(int argc, char **argv)
{
	long *v, *sum;
	int rank, n, errors = 0, all = 0, iters = 1000;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (argc > 2 && strcmp(argv[1], "-n") == 0) {
		iters = atoi(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (iters < 1) {
		if (rank == 0)
			fprintf(stderr, "mpi: -n: at least 1 round trip\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (int a = 1; a < argc || a == 1; a++) {
		int peer = argc > 1 ? atoi(argv[a]) : 1;

		if (peer < 1 || peer >= n) {
			if (rank == 0)
				fprintf(stderr, "mpi: peer '%s': a rank 1..%d\n",
					argc > 1 ? argv[a] : "1", n - 1);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		errors += pingpong(rank, peer, iters);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	v = malloc(N_RED * sizeof(*v));
	sum = malloc(N_RED * sizeof(*sum));
	if (v == NULL || sum == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int i = 0; i < N_RED; i++)
		v[i] = (long)i * (rank + 1);
	MPI_Allreduce(v, sum, N_RED, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < N_RED; i++)
		errors += sum[i] != (long)i * n * (n + 1) / 2;
	MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi: allreduce of %d longs over %d ranks: %s\n", N_RED, n,
		       all == 0 ? "right" : "WRONG");
	free(v);
	free(sum);
	MPI_Finalize();
	return all != 0;
}
