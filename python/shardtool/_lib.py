"""ctypes bindings of libshardtool (include/shardtool.h): the structs and
function signatures, and where the library is found.

The library is found, in order: $SHARDTOOL_LIBRARY (a path to
libshardtool.so), the directory `meson install` put it in (recorded in
_install.py at install time), then the system's loader path
("libshardtool.so.0")."""

import ctypes
import os

MESSAGE_SIZE = 1024

# shardtool_status
OK = 0
EIO, EDATA, EUSAGE, ENOMEM, EUNSUPPORTED, ENOTFOUND, EEXIST, ECANCELED, EREMOTE, EUNREACHABLE = range(-1, -11, -1)

KIND_NONE, KIND_BYTES, KIND_FLOAT, KIND_INT64 = 0, 1, 2, 3


class Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * MESSAGE_SIZE)]


class ReaderOptions(ctypes.Structure):
    _fields_ = [("format", ctypes.c_char_p), ("compression", ctypes.c_char_p),
                ("max_record_size", ctypes.c_uint64), ("share_index", ctypes.c_uint32),
                ("share_count", ctypes.c_uint32), ("skip_corrupt", ctypes.c_int),
                ("columns", ctypes.POINTER(ctypes.c_char_p)), ("ncolumns", ctypes.c_size_t),
                ("exclude", ctypes.POINTER(ctypes.c_char_p)), ("nexclude", ctypes.c_size_t),
                ("types", ctypes.POINTER(ctypes.c_char_p)), ("ntypes", ctypes.c_size_t),
                ("decimal", ctypes.c_char_p), ("strict_float", ctypes.c_int), ("nested", ctypes.c_char_p),
                ("maps", ctypes.c_char_p), ("delimiter", ctypes.c_char_p), ("quote", ctypes.c_char_p),
                ("no_header", ctypes.c_int), ("header", ctypes.c_char_p), ("skip_bad_rows", ctypes.c_int),
                ("empty", ctypes.c_char_p), ("infer_rows", ctypes.c_uint64), ("max_columns", ctypes.c_uint64),
                ("key_feature", ctypes.c_char_p)]


class Bytes(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class Feature(ctypes.Structure):
    _fields_ = [("name", Bytes), ("kind", ctypes.c_int), ("count", ctypes.c_uint32),
                ("int64s", ctypes.c_void_p), ("floats", ctypes.c_void_p),
                ("bytes", ctypes.POINTER(Bytes))]


class FeatureList(ctypes.Structure):
    _fields_ = [("name", Bytes), ("count", ctypes.c_uint32), ("steps", ctypes.POINTER(Feature))]


class Record(ctypes.Structure):
    _fields_ = [("features", ctypes.POINTER(Feature)), ("nfeatures", ctypes.c_uint32),
                ("lists", ctypes.POINTER(FeatureList)), ("nlists", ctypes.c_uint32),
                ("is_sequence", ctypes.c_int)]


class Column(ctypes.Structure):
    _fields_ = [("name", Bytes), ("kind", ctypes.c_int), ("is_feature_list", ctypes.c_int),
                ("present", ctypes.c_void_p), ("offsets", ctypes.c_void_p), ("step_offsets", ctypes.c_void_p),
                ("int64s", ctypes.c_void_p), ("floats", ctypes.c_void_p), ("bytes_offsets", ctypes.c_void_p),
                ("bytes_data", ctypes.c_void_p)]


class Batch(ctypes.Structure):
    _fields_ = [("nrecords", ctypes.c_uint64), ("ncolumns", ctypes.c_uint32), ("columns", ctypes.c_void_p)]


class PackArray(ctypes.Structure):
    _fields_ = [("column", ctypes.c_uint32), ("role", ctypes.c_uint32), ("dtype", ctypes.c_uint32),
                ("padded", ctypes.c_uint32), ("ndim", ctypes.c_uint32), ("reserved", ctypes.c_uint32),
                ("shape", ctypes.c_uint64 * 2), ("offset", ctypes.c_uint64), ("nbytes", ctypes.c_uint64)]


# shardtool_pack_array's role and dtype
PACK_VALUES, PACK_OFFSETS, PACK_LENGTH, PACK_STEP_LENGTH = range(4)
PACK_INT64, PACK_FLOAT32, PACK_UINT8 = 1, 2, 3


class RemoteOptions(ctypes.Structure):
    _fields_ = [("parallel", ctypes.c_int), ("chunk_size", ctypes.c_uint64), ("retries", ctypes.c_int),
                ("endpoint", ctypes.c_char_p), ("no_sign_request", ctypes.c_int), ("cacert", ctypes.c_char_p),
                ("stall_time", ctypes.c_int), ("connect_timeout", ctypes.c_int)]


class VerifyDamage(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_char * 64), ("record", ctypes.c_uint64), ("offset", ctypes.c_uint64),
                ("detail", ctypes.c_char * 512)]


class VerifyReport(ctypes.Structure):
    _fields_ = [("ok", ctypes.c_int), ("format", ctypes.c_char * 16), ("records", ctypes.c_uint64),
                ("bytes", ctypes.c_uint64), ("stream_bytes", ctypes.c_uint64), ("damage", VerifyDamage),
                ("message", ctypes.c_char * MESSAGE_SIZE)]


class VerifyManifestOptions(ctypes.Structure):
    _fields_ = [("trust_paths", ctypes.c_int), ("decode", ctypes.c_int), ("max_imbalance", ctypes.c_double)]


class VerifyManifestReport(ctypes.Structure):
    _fields_ = [("ok", ctypes.c_int), ("files", ctypes.c_uint64), ("damaged", ctypes.c_uint64),
                ("unreadable", ctypes.c_uint64), ("records", ctypes.c_uint64), ("bytes", ctypes.c_uint64),
                ("balance", ctypes.c_char * MESSAGE_SIZE), ("message", ctypes.c_char * MESSAGE_SIZE)]


# void (*on_file)(void *ctx, const char *path, const shardtool_verify_report *file)
VERIFY_MANIFEST_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(VerifyReport))


class ConvertOptions(ctypes.Structure):
    _fields_ = [("output", ctypes.c_char_p), ("to", ctypes.c_char_p), ("shards", ctypes.c_uint64),
                ("records_per_shard", ctypes.c_uint64), ("shard_size", ctypes.c_uint64),
                ("compression", ctypes.c_char_p), ("shuffle", ctypes.c_int), ("seed", ctypes.c_uint64),
                ("jobs", ctypes.c_uint64), ("index", ctypes.c_int), ("no_manifest", ctypes.c_int),
                ("force", ctypes.c_int), ("resume", ctypes.c_int), ("task_index", ctypes.c_uint32),
                ("task_count", ctypes.c_uint32), ("reader", ctypes.POINTER(ReaderOptions)),
                ("manifest", ctypes.c_char_p), ("feature_spec", ctypes.c_char_p),
                ("compression_level", ctypes.c_int), ("avro_codec", ctypes.c_char_p),
                ("parquet_codec", ctypes.c_char_p), ("row_group_size", ctypes.c_uint64),
                ("page_version", ctypes.c_int), ("bytes_as", ctypes.c_char_p), ("widen", ctypes.c_int),
                ("union_by_name", ctypes.c_int), ("strict", ctypes.c_int),
                ("cancel", ctypes.POINTER(ctypes.c_int)),
                ("key", ctypes.c_char_p), ("wds_member", ctypes.c_char_p), ("mtime", ctypes.c_int64),
                ("arrayrecord_codec", ctypes.c_char_p), ("arrayrecord_group_size", ctypes.c_uint64),
                ("tfds_dir", ctypes.c_char_p), ("tfds_name", ctypes.c_char_p), ("tfds_split", ctypes.c_char_p),
                ("tfds_version", ctypes.c_char_p), ("tfds_images", ctypes.POINTER(ctypes.c_char_p)),
                ("ntfds_images", ctypes.c_size_t), ("tfds_labels", ctypes.POINTER(ctypes.c_char_p)),
                ("ntfds_labels", ctypes.c_size_t), ("check_payloads", ctypes.c_int),
                ("skip_corrupt", ctypes.c_int), ("max_pixels", ctypes.c_uint64)]


class ConvertProgress(ctypes.Structure):
    _fields_ = [("records", ctypes.c_uint64), ("bytes_in", ctypes.c_uint64), ("total_bytes", ctypes.c_uint64)]


class ConvertReport(ctypes.Structure):
    _fields_ = [("records", ctypes.c_uint64), ("shards", ctypes.c_uint64), ("bytes", ctypes.c_uint64),
                ("resumed_finished", ctypes.c_int), ("manifest", ctypes.c_char * 4096)]


# void (*progress)(void *ctx, const shardtool_convert_progress *p)
CONVERT_PROGRESS_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(ConvertProgress))
# void (*note)(void *ctx, const char *line)
CONVERT_NOTE_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)


def _candidates():
    env = os.environ.get("SHARDTOOL_LIBRARY")
    if env:
        yield env
        return
    try:
        from . import _install
        yield os.path.join(_install.LIBDIR, "libshardtool.so.0")
    except ImportError:
        pass
    yield "libshardtool.so.0"


def _load():
    tried = []
    for name in _candidates():
        try:
            return ctypes.CDLL(name)
        except OSError as e:
            tried.append("%s (%s)" % (name, e))
    raise ImportError("cannot load libshardtool: tried " + "; ".join(tried) +
                      " (set SHARDTOOL_LIBRARY to the path of libshardtool.so)")


lib = _load()

_P = ctypes.POINTER
lib.shardtool_version.restype = ctypes.c_char_p
lib.shardtool_version.argtypes = []
lib.shardtool_reader_options_init.restype = None
lib.shardtool_reader_options_init.argtypes = [_P(ReaderOptions)]
lib.shardtool_reader_open.restype = ctypes.c_int
lib.shardtool_reader_open.argtypes = [_P(ctypes.c_char_p), ctypes.c_size_t, _P(ReaderOptions),
                                      _P(ctypes.c_void_p), _P(Error)]
lib.shardtool_reader_next.restype = ctypes.c_int
lib.shardtool_reader_next.argtypes = [ctypes.c_void_p, _P(ctypes.c_void_p), _P(ctypes.c_size_t), _P(Error)]
lib.shardtool_reader_next_record.restype = ctypes.c_int
lib.shardtool_reader_next_record.argtypes = [ctypes.c_void_p, _P(_P(Record)), _P(Error)]
lib.shardtool_reader_next_batch.restype = ctypes.c_int
lib.shardtool_reader_next_batch.argtypes = [ctypes.c_void_p, ctypes.c_size_t, _P(_P(Batch)), _P(Error)]
lib.shardtool_batch_pack_layout.restype = ctypes.c_int
lib.shardtool_batch_pack_layout.argtypes = [_P(Batch), _P(PackArray), ctypes.c_size_t, _P(ctypes.c_size_t),
                                            _P(ctypes.c_uint64), _P(Error)]
lib.shardtool_batch_pack.restype = ctypes.c_int
lib.shardtool_batch_pack.argtypes = [_P(Batch), ctypes.c_int64, ctypes.c_float, ctypes.c_void_p, ctypes.c_uint64,
                                     _P(Error)]
lib.shardtool_reader_skipped.restype = ctypes.c_uint64
lib.shardtool_reader_skipped.argtypes = [ctypes.c_void_p]
lib.shardtool_reader_input.restype = ctypes.c_char_p
lib.shardtool_reader_input.argtypes = [ctypes.c_void_p]
lib.shardtool_reader_close.restype = ctypes.c_int
lib.shardtool_reader_close.argtypes = [_P(ctypes.c_void_p)]
lib.shardtool_inputs_expand.restype = ctypes.c_int
lib.shardtool_inputs_expand.argtypes = [_P(ctypes.c_char_p), ctypes.c_size_t, _P(_P(ctypes.c_char_p)),
                                        _P(ctypes.c_size_t), _P(Error)]
lib.shardtool_inputs_free.restype = None
lib.shardtool_inputs_free.argtypes = [_P(ctypes.c_char_p), ctypes.c_size_t]
lib.shardtool_feature_spec.restype = ctypes.c_int
lib.shardtool_feature_spec.argtypes = [_P(ctypes.c_char_p), ctypes.c_size_t, _P(ReaderOptions),
                                       _P(ctypes.c_void_p), _P(Error)]
lib.shardtool_free.restype = None
lib.shardtool_free.argtypes = [ctypes.c_void_p]
lib.shardtool_remote_options_init.restype = None
lib.shardtool_remote_options_init.argtypes = [_P(RemoteOptions)]
lib.shardtool_remote_configure.restype = ctypes.c_int
lib.shardtool_remote_configure.argtypes = [_P(RemoteOptions), _P(Error)]
lib.shardtool_verify_file.restype = ctypes.c_int
lib.shardtool_verify_file.argtypes = [ctypes.c_char_p, _P(VerifyReport), _P(Error)]
lib.shardtool_verify_manifest_options_init.restype = None
lib.shardtool_verify_manifest_options_init.argtypes = [_P(VerifyManifestOptions)]
lib.shardtool_verify_manifest.restype = ctypes.c_int
lib.shardtool_verify_manifest.argtypes = [ctypes.c_char_p, _P(VerifyManifestOptions), _P(VerifyManifestReport),
                                          VERIFY_MANIFEST_CALLBACK, ctypes.c_void_p, _P(Error)]
lib.shardtool_convert_options_init.restype = None
lib.shardtool_convert_options_init.argtypes = [_P(ConvertOptions)]
lib.shardtool_convert.restype = ctypes.c_int
lib.shardtool_convert.argtypes = [_P(ctypes.c_char_p), ctypes.c_size_t, _P(ConvertOptions),
                                  CONVERT_PROGRESS_CALLBACK, CONVERT_NOTE_CALLBACK, ctypes.c_void_p,
                                  _P(ConvertReport), _P(Error)]


class SplitOptions(ctypes.Structure):
    _fields_ = [("output", ctypes.c_char_p), ("shards", ctypes.c_uint64), ("records_per_shard", ctypes.c_uint64),
                ("shard_size", ctypes.c_uint64), ("compression", ctypes.c_char_p),
                ("compression_level", ctypes.c_int), ("index", ctypes.c_int), ("manifest", ctypes.c_char_p),
                ("no_manifest", ctypes.c_int), ("feature_spec", ctypes.c_char_p), ("force", ctypes.c_int),
                ("input_compression", ctypes.c_char_p), ("skip_corrupt", ctypes.c_int),
                ("max_record_size", ctypes.c_uint64), ("cancel", ctypes.POINTER(ctypes.c_int))]


class SplitReport(ctypes.Structure):
    _fields_ = [("format", ctypes.c_char * 16), ("records", ctypes.c_uint64), ("units", ctypes.c_uint64),
                ("skipped", ctypes.c_uint64), ("shards", ctypes.c_uint64), ("bytes", ctypes.c_uint64),
                ("manifest", ctypes.c_char * 4096)]


lib.shardtool_split_options_init.restype = None
lib.shardtool_split_options_init.argtypes = [_P(SplitOptions)]
lib.shardtool_split.restype = ctypes.c_int
lib.shardtool_split.argtypes = [_P(ctypes.c_char_p), ctypes.c_size_t, _P(SplitOptions),
                                CONVERT_PROGRESS_CALLBACK, CONVERT_NOTE_CALLBACK, ctypes.c_void_p,
                                _P(SplitReport), _P(Error)]
