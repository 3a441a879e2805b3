"""Which queued jobs may start now. A job asks for no GPU (it runs at once: several CPU jobs may
run side by side), for given GPUs (`-gpu 0,1`: it waits until each of them is free), or for a
number of GPUs (it gets the free ones with the lowest ids, so two jobs never share one and none
piles onto GPU 0 while others idle)."""


class GpuRequest(object):
    """What a job asked for: `ids` (given GPUs) or `count` (any that many), or neither."""

    def __init__(self, ids=None, count=0):
        self.ids = sorted(set(ids or []))
        self.count = 0 if self.ids else int(count or 0)

    @classmethod
    def from_params(cls, params):
        return cls(params.get('gpus'), params.get('gpu_count'))

    def wants_gpus(self):
        return bool(self.ids) or self.count > 0

    def describe(self):
        if self.ids:
            return 'GPU ' + ','.join(str(i) for i in self.ids)
        if self.count:
            return '{} GPU{}'.format(self.count, 's' if self.count > 1 else '')
        return 'CPU'


def assign(queued, busy, gpus):
    """queued: [(job_id, GpuRequest)] oldest first; busy: the GPU ids running jobs hold; gpus:
    every GPU id this server may use. Returns [(job_id, [gpu ids])] for the jobs that can start
    now, taking the GPUs each is given as busy for the ones after it."""
    busy = set(busy)
    starting = []
    for job_id, request in queued:
        if not request.wants_gpus():
            starting.append((job_id, []))
            continue
        free = [gpu for gpu in sorted(gpus) if gpu not in busy]
        if request.ids:
            chosen = request.ids if set(request.ids) <= set(free) else None
        else:
            chosen = free[:request.count] if len(free) >= request.count else None
        if chosen is None:
            continue  # waits; later jobs that fit may start meanwhile
        busy.update(chosen)
        starting.append((job_id, chosen))
    return starting


def check_request(request, gpus):
    """None if `request` can ever be met on this server, else a message for the GPUs field."""
    if not request.wants_gpus():
        return None
    if not gpus:
        return 'this machine has no GPU (or this Caffe build has no GPU support); ' \
               'train on the CPU (leave the GPU choice empty)'
    missing = [gpu for gpu in request.ids if gpu not in gpus]
    if missing:
        return 'GPU {} is not on this machine; it has {}'.format(
            ','.join(map(str, missing)), ', '.join('GPU {}'.format(g) for g in gpus))
    if request.count > len(gpus):
        return 'asked for {} GPUs; this machine has {}'.format(request.count, len(gpus))
    return None
