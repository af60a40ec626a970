"""shardtool: read shards and tables through libshardtool.

    import shardtool
    for example in shardtool.open(["gs://bucket/train-*.tfrecord"]):
        ...   # a dict: feature name -> NumPy array

Inputs are given as on the shardtool command line: paths, globs,
directories, "-", and https://, s3://, gs:// URLs; TFRecord, CSV, TSV, JSON
lines, Parquet and Avro, plain or gzip / zlib compressed.  Every TFRecord
CRC is checked; bad data raises shardtool.Error with the message the
command line prints (file, record, byte offset).  shardtool.verify checks a
file, and shardtool.verify_manifest the shards a manifest lists, as
`shardtool verify` does; shardtool.convert converts inputs into shards as
`shardtool convert` does.

shardtool.torch holds ShardDataset, a torch IterableDataset over the same
reader (imported only when used: this module needs NumPy, not torch)."""

import ctypes
import os


from . import _columns, _lib, _packed
from ._lib import lib

__all__ = ["Error", "Reader", "open", "configure_remote", "convert", "expand", "feature_spec", "split", "verify",
           "verify_manifest", "version", "VerifyReport", "ManifestReport"]

_CODE_NAMES = {
    _lib.EIO: "EIO", _lib.EDATA: "EDATA", _lib.EUSAGE: "EUSAGE", _lib.ENOMEM: "ENOMEM",
    _lib.EUNSUPPORTED: "EUNSUPPORTED", _lib.ENOTFOUND: "ENOTFOUND", _lib.EEXIST: "EEXIST",
    _lib.ECANCELED: "ECANCELED", _lib.EREMOTE: "EREMOTE", _lib.EUNREACHABLE: "EUNREACHABLE",
}


class Error(Exception):
    """A failure of the library: `code` is its status (shardtool.h), `str()`
    the message the command line prints, without its "shardtool CMD: " prefix."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.code_name = _CODE_NAMES.get(code, str(code))


def _raise(err):
    raise Error(err.code, err.message.decode("utf-8", "replace"))


def version():
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return lib.shardtool_version().decode()


def _c_inputs(inputs):
    if isinstance(inputs, (str, bytes)) or hasattr(inputs, "__fspath__"):
        inputs = [inputs]
    encoded = []
    for i in inputs:
        if hasattr(i, "__fspath__"):
            i = i.__fspath__()
        encoded.append(i.encode() if isinstance(i, str) else bytes(i))
    if not encoded:
        raise ValueError("no inputs")
    return (ctypes.c_char_p * len(encoded))(*encoded), len(encoded)


def configure_remote(parallel=0, chunk_size=0, retries=-1, endpoint=None, no_sign_request=False, cacert=None,
                     stall_time=0, connect_timeout=0):
    """Sets the remote fetcher's settings for this process, before the first
    URL is read (after, it raises): the command line's --parallel,
    --chunk-size (bytes), --retries, --endpoint, --no-sign-request,
    --cacert, --stall-time and --connect-timeout (seconds).  0 / None keep
    the defaults.  Read-ahead memory is at most parallel x chunk_size (16 x
    8 MiB by default) per process; DataLoader workers forked later keep
    the settings."""
    o = _lib.RemoteOptions()
    lib.shardtool_remote_options_init(ctypes.byref(o))
    o.parallel, o.chunk_size, o.retries = int(parallel), int(chunk_size), int(retries)
    o.endpoint = endpoint.encode() if endpoint else None
    o.cacert = cacert.encode() if cacert else None
    o.no_sign_request = int(bool(no_sign_request))
    o.stall_time, o.connect_timeout = int(stall_time), int(connect_timeout)
    err = _lib.Error()
    if lib.shardtool_remote_configure(ctypes.byref(o), ctypes.byref(err)) < 0:
        _raise(err)
    global _remote_configured
    _remote_configured = (os.getpid(), dict(parallel=parallel, chunk_size=chunk_size, retries=retries,
                                            endpoint=endpoint, no_sign_request=no_sign_request, cacert=cacert,
                                            stall_time=stall_time, connect_timeout=connect_timeout))


_remote_configured = (None, None)


def _configure_remote_once(options):
    """configure_remote(**options) unless this process already has exactly
    these settings (ShardDataset calls it in the parent and in each worker,
    whether the workers were forked or spawned)."""
    pid, current = _remote_configured
    full = dict(parallel=0, chunk_size=0, retries=-1, endpoint=None, no_sign_request=False, cacert=None,
                stall_time=0, connect_timeout=0)
    full.update(options)
    if pid == os.getpid():
        if current != full:
            raise ValueError("configure_remote was called in this process with other settings: %r" % current)
        return
    configure_remote(**full)


def expand(inputs):
    """The inputs as the reader would read them, in order (directories
    walked, globs and remote prefixes listed, side files left out): a list
    of str."""
    arr, n = _c_inputs(inputs)
    paths = ctypes.POINTER(ctypes.c_char_p)()
    count = ctypes.c_size_t()
    err = _lib.Error()
    if lib.shardtool_inputs_expand(arr, n, ctypes.byref(paths), ctypes.byref(count), ctypes.byref(err)) < 0:
        _raise(err)
    try:
        return [paths[i].decode("utf-8", "surrogateescape") for i in range(count.value)]
    finally:
        lib.shardtool_inputs_free(paths, count)


def _options(format=None, compression=None, max_record_size=0, share=None, skip_corrupt=False, columns=None,
             exclude=None, types=None, decimal=None, strict_float=False, nested=None, maps=None, delimiter=None,
             quote=None, no_header=False, header=None, skip_bad_rows=False, empty=None, infer_rows=0,
             max_columns=0, key_feature=None):
    """shardtool_reader_options from Reader's keywords, and the objects its
    pointers need alive until the open has copied them."""
    opts = _lib.ReaderOptions()
    lib.shardtool_reader_options_init(ctypes.byref(opts))
    keep = []  # the option strings, alive until the open has copied them

    def strings(values):
        enc = [v.encode() for v in values]
        a = (ctypes.c_char_p * max(len(enc), 1))(*enc)
        keep.append((a, enc))
        return a, len(enc)

    def text(v):
        return v.encode() if v is not None else None

    if columns is not None:
        opts.columns, opts.ncolumns = strings(list(columns))
    if exclude is not None:
        opts.exclude, opts.nexclude = strings(list(exclude))
    if types:
        items = types.items() if isinstance(types, dict) else (t.split("=", 1) for t in types)
        opts.types, opts.ntypes = strings("%s=%s" % (k, v) for k, v in items)
    opts.decimal, opts.nested, opts.maps = text(decimal), text(nested), text(maps)
    opts.delimiter, opts.quote, opts.header, opts.empty = text(delimiter), text(quote), text(header), text(empty)
    opts.strict_float, opts.no_header, opts.skip_bad_rows = int(strict_float), int(no_header), int(skip_bad_rows)
    opts.infer_rows, opts.max_columns = int(infer_rows), int(max_columns)
    opts.key_feature = text(key_feature)
    opts.format = format.encode() if format else None
    opts.compression = compression.encode() if compression else None
    opts.max_record_size = int(max_record_size)
    if share is not None:
        index, count = share
        if not 0 <= index < count:
            raise ValueError("share index %r is not in 0 .. %r" % (index, count - 1))
        opts.share_index, opts.share_count = index, count
    opts.skip_corrupt = 1 if skip_corrupt else 0
    return opts, keep


class Reader:
    """Iterates the records of `inputs`: serialized tf.train.Example (or
    SequenceExample) bytes, or with decode=True dicts of feature name ->
    NumPy array (int64, float32, or an object array of bytes; a
    SequenceExample's FeatureLists as lists of arrays, one per step), or
    with batch_size=N dicts of whole batches of up to N records
    ((records, width) arrays, padded with pad_value where records differ,
    NAME + "/length" then holding each record's count; bytes features as
    bytes_layout says, see shardtool._packed).  Decoding runs in C, a
    batch of records at a time.

    bytes_layout     batches: "objects" (default) gives bytes features as
                     object arrays of bytes (or a list per record when
                     records differ) and FeatureLists as a list per record of
                     its steps' arrays; "offsets" gives no Python object per
                     value: NAME (uint8, the values' bytes end to end), NAME +
                     "/offsets" (int64, values + 1) and NAME + "/length"
                     (int64, values per record); FeatureLists as NAME (the
                     steps' values end to end), NAME + "/length" (steps per
                     record) and NAME + "/step_length" (values per step)

    Options (those of the command line):
      format           "tfrecord", "csv", "tsv", "jsonl", "parquet", "avro",
                       "webdataset", "arrayrecord"
                       (None: told from each input's content and name)
      compression      "auto", "none", "gzip", "zlib"
      max_record_size  bytes; 0 for the default cap
      share            (index, count): this reader's share of the records,
                       dealt as `convert --task index/count` deals them;
                       the shares of one count are disjoint and cover all
      skip_corrupt     skip damaged TFRecord records instead of raising;
                       `skipped` counts them
      columns, exclude          lists of column / feature names (--columns, --exclude)
      types            {column: "int64" | "float" | "bytes" | "skip"} (--type)
      decimal          "float" or "text"; strict_float: bool
      nested           "sequence" or "refuse"; maps: "key-value" or "by-key"
      delimiter, quote, no_header, header ("a,b,c"), skip_bad_rows,
      empty ("omit" | "empty" | "error"), infer_rows, max_columns
                       CSV, TSV and JSON lines, as on the command line
      key_feature      WebDataset: the sample's key as a bytes feature of
                       this name (--key-feature)

    Memory: one unit (a batch of records, a Parquet row group or Avro
    block) of one input at a time, plus the remote fetcher's read-ahead."""

    def __init__(self, inputs, *, decode=False, batch_size=None, pad_value=0, bytes_layout="objects", format=None,
                 compression=None, max_record_size=0, share=None, skip_corrupt=False, columns=None, exclude=None,
                 types=None, decimal=None, strict_float=False, nested=None, maps=None, delimiter=None, quote=None,
                 no_header=False, header=None, skip_bad_rows=False, empty=None, infer_rows=0, max_columns=0,
                 key_feature=None):
        if bytes_layout not in _packed.LAYOUTS:
            raise ValueError("bytes_layout must be one of %s, not %r" % (", ".join(_packed.LAYOUTS), bytes_layout))
        self._bytes_layout = bytes_layout
        arr, n = _c_inputs(inputs)
        opts, keep = _options(format=format, compression=compression, max_record_size=max_record_size, share=share,
                              skip_corrupt=skip_corrupt, columns=columns, exclude=exclude, types=types,
                              decimal=decimal, strict_float=strict_float, nested=nested, maps=maps,
                              delimiter=delimiter, quote=quote, no_header=no_header, header=header,
                              skip_bad_rows=skip_bad_rows, empty=empty, infer_rows=infer_rows,
                              max_columns=max_columns, key_feature=key_feature)
        if batch_size is not None and int(batch_size) < 1:
            raise ValueError("batch_size must be at least 1")
        self._batch_size = int(batch_size) if batch_size is not None else None
        self._pad_value = pad_value
        self._decode = decode or batch_size is not None
        self._handle = ctypes.c_void_p()
        self._err = _lib.Error()
        self._names = {}
        self._data = ctypes.c_void_p()
        self._len = ctypes.c_size_t()
        self._batch = ctypes.POINTER(_lib.Batch)()
        self._pending = iter(())
        self._packer = _packed.Packer(pad_value, bytes_layout)
        if lib.shardtool_reader_open(arr, n, ctypes.byref(opts), ctypes.byref(self._handle),
                                     ctypes.byref(self._err)) < 0:
            _raise(self._err)

    def __iter__(self):
        return self

    def _next_columns(self, max_records):
        """(n, [Column]) of the next batch, or None at the end."""
        rc = lib.shardtool_reader_next_batch(self._handle, max_records, ctypes.byref(self._batch),
                                             ctypes.byref(self._err))
        if rc == 1:
            return _columns.columns(self._batch, self._names)
        self._stop(rc)

    def _next_plan(self):
        """(n, _packed._Plan) of the next batch of batch_size records: its
        arrays still in the library's memory, to be packed by
        self._packer.fill before the next call.  StopIteration at the end."""
        if not self._handle:
            raise StopIteration
        rc = lib.shardtool_reader_next_batch(self._handle, self._batch_size, ctypes.byref(self._batch),
                                             ctypes.byref(self._err))
        if rc == 1:
            return self._packer.plan(self._batch)
        self._stop(rc)

    def _decoded_records(self):
        """A generator of the decoded records (decode=True, no batch_size):
        what iterating the reader gives, without a call of __next__ per
        record."""
        for rec in self._pending:
            yield rec
        while self._handle:
            try:
                n, cols = self._next_columns(1024)
            except StopIteration:
                return
            yield from _columns.records(n, cols)

    def _stop(self, rc):
        if rc == 0:
            self.close()
            raise StopIteration
        err = Error(self._err.code, self._err.message.decode("utf-8", "replace"))
        self.close()
        raise err

    def __next__(self):
        if self._decode:
            if self._batch_size is not None:
                n, p = self._next_plan()
                buf = bytearray(p.size)
                self._packer.fill(p, buf)
                return _packed.unpack(buf, p.entries)
            for rec in self._pending:
                return rec
            if not self._handle:
                raise StopIteration
            # Records are decoded 1024 at a time: the per-batch work of
            # cutting columns into records is then a small share of it.
            n, cols = self._next_columns(1024)
            self._pending = iter(_columns.records(n, cols))
            return next(self._pending)
        if not self._handle:
            raise StopIteration
        rc = lib.shardtool_reader_next(self._handle, ctypes.byref(self._data), ctypes.byref(self._len),
                                       ctypes.byref(self._err))
        if rc == 1:
            return ctypes.string_at(self._data.value, self._len.value) if self._len.value else b""
        self._stop(rc)

    @property
    def skipped(self):
        """Damaged records skipped so far (skip_corrupt=True)."""
        return lib.shardtool_reader_skipped(self._handle) if self._handle else self._skipped_at_close

    @property
    def input(self):
        """The input the last record came from."""
        p = lib.shardtool_reader_input(self._handle) if self._handle else None
        return p.decode("utf-8", "surrogateescape") if p else self._input_at_close

    _skipped_at_close = 0
    _input_at_close = None

    def close(self):
        if self._handle:
            self._skipped_at_close = lib.shardtool_reader_skipped(self._handle)
            p = lib.shardtool_reader_input(self._handle)
            self._input_at_close = p.decode("utf-8", "surrogateescape") if p else None
            lib.shardtool_reader_close(ctypes.byref(self._handle))
            self._handle = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def feature_spec(inputs, **options):
    """Reads every record of `inputs` and returns their tf.io.parse_example
    spec (or parse_sequence_example's for SequenceExamples) as a dict, the
    document `shardtool stat --feature-spec -` prints: {"features": {NAME:
    {"type": "FixedLenFeature" | "VarLenFeature", "shape", "dtype", ...}}}.
    Options as for shardtool.open."""
    import json
    arr, n = _c_inputs(inputs)
    opts, keep = _options(**options)
    text = ctypes.c_void_p()
    err = _lib.Error()
    if lib.shardtool_feature_spec(arr, n, ctypes.byref(opts), ctypes.byref(text), ctypes.byref(err)) < 0:
        _raise(err)
    try:
        return json.loads(ctypes.string_at(text.value).decode("utf-8"))
    finally:
        lib.shardtool_free(text)


def open(inputs, **options):  # noqa: A001  (shardtool.open, like io.open)
    """A Reader over `inputs` (see Reader for the options)."""
    return Reader(inputs, **options)


class VerifyReport:
    """What `shardtool verify FILE` found: ok, format, records, bytes (as
    stored), stream_bytes (decompressed), the first damage (kind, record,
    offset, detail) and message, the line the command line prints; path,
    the file checked."""

    def __init__(self, r, path=None):
        self.path = path
        self.ok = bool(r.ok)
        self.format = r.format.decode()
        self.records = r.records
        self.bytes = r.bytes
        self.stream_bytes = r.stream_bytes
        self.damage = None if self.ok else {
            "kind": r.damage.kind.decode(), "record": r.damage.record, "offset": r.damage.offset,
            "detail": r.damage.detail.decode("utf-8", "replace")}
        self.message = r.message.decode("utf-8", "replace")

    def __bool__(self):
        return self.ok

    def __repr__(self):
        return "VerifyReport(%r)" % self.message


def verify(path):
    """Checks one TFRecord, Parquet, Avro or ArrayRecord file or object as `shardtool
    verify` does; returns a VerifyReport (report.ok says whether it is
    intact).  Raises Error when the file cannot be read at all."""
    if hasattr(path, "__fspath__"):
        path = path.__fspath__()
    report = _lib.VerifyReport()
    err = _lib.Error()
    if lib.shardtool_verify_file(path.encode() if isinstance(path, str) else path, ctypes.byref(report),
                                 ctypes.byref(err)) < 0:
        _raise(err)
    return VerifyReport(report, path if isinstance(path, str) else path.decode("utf-8", "surrogateescape"))


class ManifestReport:
    """What `shardtool verify --manifest MANIFEST` found.

      ok          True when every listed shard is there, intact and as the
                  manifest describes it, no unlisted shard of the set lies
                  beside them (and with max_imbalance the shards are even
                  enough)
      files       a VerifyReport per result, in the order verify prints
                  them: each shard checked, and each missing, unlisted or
                  unusable one (ok False, format "", damage["kind"] one of
                  "manifest mismatch", "unlisted shard", "unsafe path", "bad
                  manifest entry", "uneven shards"; "unreadable" for a shard
                  that could not be read at all); report.message is the
                  line verify prints, report.path the shard
      damaged, unreadable, records, bytes
                  the counts (records and bytes of the shards read)
      balance     with max_imbalance, when the shards are even enough, the
                  "MANIFEST: balance: ..." line verify prints; else ""
      message     "N files: I intact, D damaged, U unreadable; R records"
    """

    def __init__(self, summary, files):
        self.ok = bool(summary.ok)
        self.files = files
        self.damaged = summary.damaged
        self.unreadable = summary.unreadable
        self.records = summary.records
        self.bytes = summary.bytes
        self.balance = summary.balance.decode("utf-8", "replace")
        self.message = summary.message.decode("utf-8", "replace")

    def __bool__(self):
        return self.ok

    def __repr__(self):
        return "ManifestReport(%r)" % self.message


def verify_manifest(path, *, trust_paths=False, decode=False, max_imbalance=None):
    """Checks the shards the manifest at `path` lists (a path or URL) as
    `shardtool verify --manifest` does; returns a ManifestReport (report.ok
    says whether the set is sound, report.files has each shard's
    VerifyReport).  trust_paths, decode and max_imbalance are
    --trust-manifest-paths, --decode and --max-imbalance.  Raises Error
    when the manifest cannot be read or is not a manifest."""
    if hasattr(path, "__fspath__"):
        path = path.__fspath__()
    opts = _lib.VerifyManifestOptions()
    lib.shardtool_verify_manifest_options_init(ctypes.byref(opts))
    opts.trust_paths = int(bool(trust_paths))
    opts.decode = int(bool(decode))
    if max_imbalance is not None:
        if not float(max_imbalance) >= 0:
            raise ValueError("max_imbalance must be a number >= 0, not %r" % (max_imbalance,))
        opts.max_imbalance = float(max_imbalance)
    files = []

    def on_file(ctx, shard, report):
        files.append(VerifyReport(report.contents, shard.decode("utf-8", "surrogateescape")))

    callback = _lib.VERIFY_MANIFEST_CALLBACK(on_file)
    summary = _lib.VerifyManifestReport()
    err = _lib.Error()
    if lib.shardtool_verify_manifest(path.encode() if isinstance(path, str) else path, ctypes.byref(opts),
                                     ctypes.byref(summary), callback, None, ctypes.byref(err)) < 0:
        _raise(err)
    return ManifestReport(summary, files)


def _text(value):
    """A text option: str, bytes or a path, as C text (None stays None)."""
    if value is None:
        return None
    if hasattr(value, "__fspath__"):
        value = value.__fspath__()
    return value.encode() if isinstance(value, str) else bytes(value)


def _convert_format_options(opts, key, wds_member, mtime, arrayrecord_codec, arrayrecord_group_size, tfds, name,
                            split, version, image, label, check_payloads, skip_corrupt, max_pixels):
    """The options of one output format, a TFDS directory and the payload
    check into opts; returns the arrays its pointers need alive until the
    run returns."""
    opts.key, opts.wds_member, opts.arrayrecord_codec = _text(key), _text(wds_member), _text(arrayrecord_codec)
    if mtime is not None:
        if int(mtime) < 0:
            raise ValueError("mtime must be at least 0, not %r" % (mtime,))
        opts.mtime = int(mtime)
    if arrayrecord_group_size is not None:
        if int(arrayrecord_group_size) < 1:
            raise ValueError("arrayrecord_group_size must be at least 1, not %r" % (arrayrecord_group_size,))
        opts.arrayrecord_group_size = int(arrayrecord_group_size)
    opts.tfds_dir, opts.tfds_name, opts.tfds_split = _text(tfds), _text(name), _text(split)
    opts.tfds_version = _text(version)
    keep = []

    def strings(values):
        enc = [_text(v) for v in values]
        a = (ctypes.c_char_p * max(len(enc), 1))(*enc)
        keep.append((a, enc))
        return ctypes.cast(a, ctypes.POINTER(ctypes.c_char_p)), len(enc)

    if image is not None:
        opts.tfds_images, opts.ntfds_images = strings([image] if isinstance(image, str) else list(image))
    if label is not None:
        if isinstance(label, dict):
            label = ["%s=%s" % (col, os.fspath(v) if hasattr(v, "__fspath__") else v) for col, v in label.items()]
        opts.tfds_labels, opts.ntfds_labels = strings([label] if isinstance(label, str) else list(label))
    modes = {False: 0, None: 0, True: 1, "full": 1, "headers": 2}
    if check_payloads not in modes:
        raise ValueError("check_payloads is True, \"full\" or \"headers\", not %r" % (check_payloads,))
    opts.check_payloads = modes[check_payloads]
    opts.skip_corrupt = int(bool(skip_corrupt))
    if max_pixels is not None:
        if int(max_pixels) < 1:
            raise ValueError("max_pixels must be at least 1, not %r" % (max_pixels,))
        opts.max_pixels = int(max_pixels)
    return keep


class _RunCallbacks:
    """The progress and note callbacks of a run (convert, split).  An
    exception raised by either (KeyboardInterrupt included) stops the run
    through opts.cancel and is raised again by raise_again() once the run
    has returned: it cannot cross the C library."""

    def __init__(self, opts, progress, note):
        self.raised = []
        self._cancel = ctypes.c_int(0)
        opts.cancel = ctypes.pointer(self._cancel)

        def on_progress(ctx, p):
            if progress is not None and not self.raised:
                try:
                    progress({"records": p.contents.records, "bytes_in": p.contents.bytes_in,
                              "total_bytes": p.contents.total_bytes})
                except BaseException as e:
                    self._stop(e)

        def on_note(ctx, line):
            if note is not None and not self.raised:
                try:
                    note(line.decode("utf-8", "replace"))
                except BaseException as e:
                    self._stop(e)

        self.progress = _lib.CONVERT_PROGRESS_CALLBACK(on_progress)
        self.note = _lib.CONVERT_NOTE_CALLBACK(on_note)

    def _stop(self, e):
        self.raised.append(e)
        self._cancel.value = 1

    def raise_again(self):
        if self.raised:
            raise self.raised[0]


def convert(inputs, output=None, *, to="tfrecord", shards=None, records_per_shard=None, shard_size=None,
            compression=None, shuffle=False, seed=0, jobs=0, index=False, no_manifest=False, force=False,
            resume=False, task=None, progress=None, note=None, manifest=None, feature_spec=None,
            compression_level=None, avro_codec=None, parquet_codec=None, row_group_size=None,
            page_version=None, bytes_as=None, widen=False, union_by_name=False, strict=False,
            key=None, wds_member=None, mtime=None, arrayrecord_codec=None, arrayrecord_group_size=None,
            tfds=None, name=None, split=None, version=None, image=None, label=None,
            check_payloads=False, skip_corrupt=False, max_pixels=None, **options):
    """Converts `inputs` into shards with the prefix `output`, as `shardtool
    convert INPUTS -o OUTPUT` does, through the same engine: the same shards,
    manifest and commit.  to, shards, records_per_shard, shard_size (bytes),
    compression ("gzip", "zlib"), shuffle, seed, jobs, index, no_manifest,
    force, resume, manifest, feature_spec, compression_level, avro_codec,
    parquet_codec, row_group_size (bytes), page_version, bytes_as, widen,
    union_by_name and strict are convert's options of those names; task=(I, N)
    is --task I/N.  The other keywords are the input options of shardtool.open.

    to="webdataset": key (a column: each sample's key; default the record's
    number), wds_member ("default", a member per feature, or "json", one
    KEY.json per sample) and mtime (seconds, every member's) are --key,
    --wds-member and --mtime.  to="arrayrecord": arrayrecord_codec ("zstd",
    "none", "brotli", "snappy"; compression_level its level) and
    arrayrecord_group_size (records per chunk) are --arrayrecord-codec and
    --arrayrecord-group-size.  Each is refused with another format.

    tfds=DIR with name and split (and version, default "1.0.0") writes a
    split of a prepared TFDS directory instead of `output` (leave it None),
    as --tfds DIR --name NAME --split SPLIT: DIR/NAME/VERSION/ with the
    shards, dataset_info.json and features.json.  image (a list of columns of
    JPEG or PNG images) and label (a list of "COL=names.txt" or "COL=N", or a
    dict {COL: path or N}: a ClassLabel) are --image and --label.

    check_payloads (True or "full": every image and audio value decoded;
    "headers": headers only), skip_corrupt (leave a record with a bad payload
    out, listed in the manifest, instead of failing) and max_pixels are
    --check-payloads[=headers], --skip-corrupt and --max-pixels.

    An exception raised by progress or note (KeyboardInterrupt included: the
    run calls progress often, so Ctrl-C reaches it) stops the run, which
    removes what it wrote, and is raised again.

    progress (or None) is called as records are read with a dict {"records",
    "bytes_in", "total_bytes"} (records never decreasing, the last call has
    the total; total_bytes 0 when unknown); note (or None) with each note the
    command line prints.  Returns a dict {"records", "shards", "bytes",
    "manifest", "resumed_finished"}.  Raises Error with the command line's
    message (an existing output set without force, a bad option, bad data)."""
    arr, n = _c_inputs(inputs)
    ropts, keep = _options(**options)
    opts = _lib.ConvertOptions()
    lib.shardtool_convert_options_init(ctypes.byref(opts))
    # before the loops below, which reuse `name`
    keep_lists = _convert_format_options(opts, key, wds_member, mtime, arrayrecord_codec, arrayrecord_group_size,
                                         tfds, name, split, version, image, label, check_payloads, skip_corrupt,
                                         max_pixels)
    if hasattr(output, "__fspath__"):
        output = output.__fspath__()
    out = None if output is None else output.encode() if isinstance(output, str) else bytes(output)
    to_b = to.encode() if to else None
    comp = compression.encode() if compression else None
    opts.output, opts.to, opts.compression = out, to_b, comp
    for name, value in (("shards", shards), ("records_per_shard", records_per_shard), ("shard_size", shard_size)):
        if value is not None:
            if int(value) < 1:
                raise ValueError("%s must be at least 1, not %r" % (name, value))
            setattr(opts, name, int(value))
    opts.shuffle, opts.seed, opts.jobs = int(bool(shuffle)), int(seed), int(jobs)
    opts.index, opts.no_manifest = int(bool(index)), int(bool(no_manifest))
    opts.force, opts.resume = int(bool(force)), int(bool(resume))
    if task is not None:
        i, count = task
        if not 0 <= i < count:
            raise ValueError("task index %r is not in 0 .. %r" % (i, count - 1))
        opts.task_index, opts.task_count = i, count
    texts = {"manifest": manifest, "feature_spec": feature_spec, "avro_codec": avro_codec,
             "parquet_codec": parquet_codec, "bytes_as": bytes_as}
    for name, value in texts.items():
        if value is not None:
            if hasattr(value, "__fspath__"):
                value = value.__fspath__()
            setattr(opts, name, value.encode() if isinstance(value, str) else bytes(value))
    for name, value in (("compression_level", compression_level), ("row_group_size", row_group_size),
                        ("page_version", page_version)):
        if value is not None:
            setattr(opts, name, int(value))
    opts.widen, opts.union_by_name, opts.strict = int(bool(widen)), int(bool(union_by_name)), int(bool(strict))
    opts.reader = ctypes.pointer(ropts)
    calls = _RunCallbacks(opts, progress, note)
    report = _lib.ConvertReport()
    err = _lib.Error()
    rc = lib.shardtool_convert(arr, n, ctypes.byref(opts), calls.progress, calls.note, None, ctypes.byref(report),
                               ctypes.byref(err))
    del keep, keep_lists
    calls.raise_again()
    if rc < 0:
        _raise(err)
    return {"records": report.records, "shards": report.shards, "bytes": report.bytes,
            "manifest": report.manifest.decode("utf-8", "surrogateescape"),
            "resumed_finished": bool(report.resumed_finished)}


def split(inputs, output, *, shards=None, records_per_shard=None, shard_size=None, compression=None,
          compression_level=None, index=False, manifest=None, no_manifest=False, feature_spec=None, force=False,
          input_compression=None, skip_corrupt=False, max_record_size=None, progress=None, note=None):
    """Re-shards `inputs` into shards with the prefix `output`, as `shardtool
    split INPUTS -o OUTPUT` does, through the same engine: TFRecord records,
    Avro blocks, WebDataset samples or ArrayRecord chunks copied without
    decoding (every check on the way), into the same shards and manifest.
    shards, records_per_shard, shard_size (bytes), compression ("gzip",
    "zlib"), compression_level, index, manifest, no_manifest, feature_spec,
    force, input_compression ("auto", "none", "gzip", "zlib"), skip_corrupt
    and max_record_size (bytes) are split's options of those names.

    progress and note are called as convert's are (total_bytes is 0); an
    exception raised by either stops the run, which removes what it wrote,
    and is raised again.  Returns a dict {"format" (the inputs' kind:
    "tfrecord", "avro", "webdataset" or "arrayrecord"), "records", "units"
    (Avro blocks or ArrayRecord chunks), "skipped", "shards", "bytes",
    "manifest"}.  Raises Error with the command line's message (an existing
    output set without force, a mix of kinds, a bad option, bad data)."""
    arr, n = _c_inputs(inputs)
    opts = _lib.SplitOptions()
    lib.shardtool_split_options_init(ctypes.byref(opts))
    texts = {"output": output, "compression": compression, "manifest": manifest, "feature_spec": feature_spec,
             "input_compression": input_compression}
    for name, value in texts.items():
        if value is not None:
            if hasattr(value, "__fspath__"):
                value = value.__fspath__()
            setattr(opts, name, value.encode() if isinstance(value, str) else bytes(value))
    for name, value in (("shards", shards), ("records_per_shard", records_per_shard), ("shard_size", shard_size)):
        if value is not None:
            if int(value) < 1:
                raise ValueError("%s must be at least 1, not %r" % (name, value))
            setattr(opts, name, int(value))
    if compression_level is not None:
        opts.compression_level = int(compression_level)
    if max_record_size is not None:
        opts.max_record_size = int(max_record_size)
    opts.index, opts.no_manifest = int(bool(index)), int(bool(no_manifest))
    opts.force, opts.skip_corrupt = int(bool(force)), int(bool(skip_corrupt))
    calls = _RunCallbacks(opts, progress, note)
    report = _lib.SplitReport()
    err = _lib.Error()
    rc = lib.shardtool_split(arr, n, ctypes.byref(opts), calls.progress, calls.note, None, ctypes.byref(report),
                             ctypes.byref(err))
    calls.raise_again()
    if rc < 0:
        _raise(err)
    return {"format": report.format.decode(), "records": report.records, "units": report.units,
            "skipped": report.skipped, "shards": report.shards, "bytes": report.bytes,
            "manifest": report.manifest.decode("utf-8", "surrogateescape")}
