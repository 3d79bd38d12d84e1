/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Sealed regions for local reads (snapshot.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"
#include "procfs.h"
#include "snapshot.h"
#include "snap.h"

int snapshot_region_new(const char *name, size_t size, struct snapshot_region *ret)
{
	char path[64];
	void *map = MAP_FAILED;
	int fd, ro = -1, r = 0;

	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		r = -errno;
		log_error("Failed to create the memfd %s: %m", name);
		goto out;
	}
	if (ftruncate(fd, (off_t)size) < 0) {
		r = -errno;
		log_error("Failed to size the memfd %s to %zu bytes: %m", name, size);
		goto out;
	}
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		r = -errno;
		log_error("Failed to map the memfd %s: %m", name);
		goto out;
	}
	/* F_SEAL_WRITE would refuse while our writable mapping exists;
	 * F_SEAL_FUTURE_WRITE (Linux 5.1) keeps it and refuses every new one. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) < 0) {
		r = -errno;
		log_error("Failed to seal the memfd %s (F_SEAL_FUTURE_WRITE needs Linux 5.1): %m", name);
		goto out;
	}
	snprintf(path, sizeof(path), PROCFS_ROOT "/self/fd/%d", fd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	if (ro < 0) {
		r = -errno;
		log_error("Failed to reopen the memfd %s read-only through %s: %m", name, path);
		goto out;
	}
	*ret = (struct snapshot_region){ .map = map, .size = size, .ro_fd = ro };
	map = MAP_FAILED;
out:
	if (map != MAP_FAILED)
		munmap(map, size);
	if (fd >= 0)
		close(fd);
	return r;
}

void snapshot_region_free(struct snapshot_region *r)
{
	if (!r->map)
		return;
	munmap(r->map, r->size);
	close(r->ro_fd);
	r->map = NULL;
	r->ro_fd = -1;
}

int snapshot_new(const struct topo *t, int map_fd, size_t map_size, struct snapshot *ret)
{
	int r;

	*ret = (struct snapshot){ .map_fd = -1 };
	if (map_fd < 0)
		return 0;
	r = snapshot_region_new("rtplace-snapshot", snap_size(t->ncpus), &ret->region);
	if (r < 0)
		return r;
	snap_init(ret->region.map, t->ncpus);
	ret->map_fd = map_fd;
	ret->map_size = map_size;
	return 0;
}

void snapshot_free(struct snapshot *sn)
{
	snapshot_region_free(&sn->region);
}

void snapshot_publish(struct snapshot *sn, const struct topo *t, const struct placement_config *cfg,
		      const struct rtplace_cpumask *housekeeping, const struct placement_claims *claims, bool force)
{
	if (!sn->region.map || (!force && claims && claims->stamp == sn->stamp))
		return;
	snap_publish(sn->region.map, t, cfg, housekeeping, claims ? claims->level : NULL);
	sn->stamp = claims ? claims->stamp : 0;
}

void snapshot_rotor(struct snapshot *sn, uint32_t rotor)
{
	if (sn->region.map)
		snap_set_rotor(sn->region.map, rotor);
}

int snapshot_offer(const struct snapshot *sn, struct rtplace_local_reply *ret, int fds[2])
{
	if (!sn->region.map || sn->map_fd < 0)
		return -EOPNOTSUPP;
	*ret = (struct rtplace_local_reply){
		.map_size = sn->map_size,
		.snap_size = sn->region.size,
		.snap_layout = SNAP_LAYOUT,
	};
	fds[0] = sn->map_fd;
	fds[1] = sn->region.ro_fd;
	return 0;
}
