"""A minimal PEP 517 backend (standard library only) that builds the pure-Python wheel of dsh_sdk.

The wheel holds dsh_sdk/*.py and the dist-info files (METADATA, WHEEL, RECORD)."""
import base64
import hashlib
import os
import zipfile

NAME, VERSION = "dsh_sdk", "0.1.0"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIST_INFO = f"{NAME}-{VERSION}.dist-info"
METADATA = f"Metadata-Version: 2.1\nName: dsh-sdk\nVersion: {VERSION}\nSummary: Python client of dsh sdk\nRequires-Python: >=3.10\n"
WHEEL = "Wheel-Version: 1.0\nGenerator: dsh_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _files():
    package = os.path.join(ROOT, NAME)
    for name in sorted(os.listdir(package)):
        if name.endswith(".py"):
            with open(os.path.join(package, name), "rb") as f:
                yield f"{NAME}/{name}", f.read()


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    target = os.path.join(metadata_directory, DIST_INFO)
    os.makedirs(target, exist_ok=True)
    for name, text in (("METADATA", METADATA), ("WHEEL", WHEEL)):
        with open(os.path.join(target, name), "w") as f:
            f.write(text)
    return DIST_INFO


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    filename = f"{NAME}-{VERSION}-py3-none-any.whl"
    entries = list(_files()) + [(f"{DIST_INFO}/METADATA", METADATA.encode()), (f"{DIST_INFO}/WHEEL", WHEEL.encode())]
    record = "\n".join([_record_line(p, d) for p, d in entries] + [f"{DIST_INFO}/RECORD,,", ""])
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in entries:
            wheel.writestr(path, data)
        wheel.writestr(f"{DIST_INFO}/RECORD", record)
    return filename
