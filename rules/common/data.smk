# Inputs of the data stage: the user's source files, pinned downloads, and what the tokenizer reads.


def local_source_files(wildcards):
    """The files a task reads in place. Their times are ignored (ancient): a copy or a re-mounted share
    touches them without changing a word, and a rerun here would retrain every model downstream. Their
    contents count instead, through source_contents."""
    return [ancient(name) for name in gold_sources.local_source_files(source_settings(wildcards))]


def source_contents(wildcards):
    """A digest of the files a task reads in place, as a param: editing them rebuilds the dataset."""
    files = gold_sources.local_source_files(source_settings(wildcards))
    return gold_sources.source_files_digest(files) if files else None


def evaluation_source_settings(wildcards):
    """The source settings the test split reads (the verification keys left out)."""
    return gold_views.canonical(gold_views.evaluation_source_view(source_settings(wildcards)))


def verification_settings(wildcards):
    """The source settings the data checks read (rule verify_dataset), with the task's metric where it
    scores final answers (their references must state them)."""
    checks = gold_views.verification_view(source_settings(wildcards))
    metric = task_settings(wildcards)["metric"]
    if metric in gold_views.ANSWER_METRIC_NAMES:
        checks["answer_metric"] = metric
    return gold_views.canonical(checks)


def training_source_settings(wildcards):
    """The source settings the training splits read (test-only and verification keys left out)."""
    return gold_views.canonical(gold_views.training_source_view(source_settings(wildcards)))


def training_source_files(wildcards):
    """The files the training splits read in place (a local source's test file is not one of them)."""
    files = gold_sources.local_source_files(source_settings(wildcards), TRAINING_SPLITS)
    return [ancient(name) for name in files]


def training_source_contents(wildcards):
    files = gold_sources.local_source_files(source_settings(wildcards), TRAINING_SPLITS)
    return gold_sources.source_files_digest(files) if files else None


def check_downloaded_archives():
    """An archive on disk that no longer matches its task's url or checksum stops the run here: neither
    setting is a job's param (rules/data.smk), so nothing would rerun to notice."""
    for task in EXPERIMENT["tasks"]:
        source = config["tasks"][task]["source"]
        if gold_sources.needs_download(source):
            problem = gold_download.archive_problem(
                path(ARCHIVE, task=task), source.get("url"), source.get("checksum")
            )
            if problem:
                raise WorkflowError(f"task {task}: {problem}")


check_downloaded_archives()


def source_archive_or_none(wildcards):
    """The archive path handed to prepare_dataset, None for sources without one."""
    return source_archive(wildcards) or None


def source_archive(wildcards):
    """The downloaded archive of an NQG or IWSLT14 task (download_source); other sources need none."""
    if gold_sources.needs_download(source_settings(wildcards)):
        return path(ARCHIVE, task=wildcards.task)
    return []


def fetch_inputs(wildcards):
    """Per task of the experiment: its downloaded archive, or its prepared data where a hub dataset is read."""
    inputs = []
    for task in EXPERIMENT["tasks"]:
        source = canonical_task(task)["source"]
        if gold_sources.needs_download(source):
            inputs.append(path(ARCHIVE, task=task))
        elif gold_sources.reads_hub(source):
            inputs.append(path(DATA, task=task, split="train"))
    return inputs


def tokenizer_input(wildcards):
    """Models built from scratch need the task's trained tokenizer; pretrained ones bring their own."""
    if gold_views.uses_trained_tokenizer(task_settings(wildcards)):
        return path(TOKENIZER, task=wildcards.task)
    return []
