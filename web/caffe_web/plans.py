"""A job's stages, by kind: what the runner runs, in order."""


class Stage(object):
    """One step of a job: a tool's argument list (argv), or a Python function run(log_path,
    should_stop) -> exit code; its log file (in the job folder); an optional after(state) that
    records what the stage found."""

    def __init__(self, name, log, argv=None, run=None, after=None):
        self.name, self.log, self.argv, self.run, self.after = name, log, argv, run, after


def plan(job, config, state):
    if job.kind == 'dataset':
        from . import datasets
        return datasets.plan(job, config, state)
    from . import models
    return models.plan(job, config, state)


def finish(job):
    """After the last stage, however it ended: a model keeps its graph's parse beside a long
    log, so that its page loads without reading the log again."""
    if job.kind == 'model':
        from . import training_graph
        training_graph.keep_parse(job)
