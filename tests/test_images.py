"""Pure helpers of the image builder: module order, cpio, apt output, uImage headers."""
import subprocess

import pytest

from boardlab.kernelbuilds import uimage
from boardlab.images import rootfs
from boardlab.images import debs


def test_module_depends_reads_modinfo():
    blob = b"\x7fELF...\0license=GPL\0depends=nfs,lockd,sunrpc\0vermagic=6.1\0"
    assert rootfs.module_depends(blob) == ["nfs", "lockd", "sunrpc"]
    assert rootfs.module_depends(b"\0depends=\0") == []


def test_modules_load_after_what_they_depend_on():
    deps = {"nfsv3": ["nfs", "lockd"], "nfs": ["sunrpc", "lockd"], "lockd": ["sunrpc"],
            "sunrpc": [], "virtio_net": ["net_failover"], "net_failover": ["failover"],
            "failover": []}
    order = rootfs.module_load_order(["virtio_net", "nfsv3"], deps.__getitem__)
    assert order == ["failover", "net_failover", "virtio_net", "sunrpc", "lockd", "nfs", "nfsv3"]


def test_a_dependency_cycle_is_an_error():
    with pytest.raises(rootfs.ImageBuildError, match="cycle: a -> b -> a"):
        rootfs.module_load_order(["a"], {"a": ["b"], "b": ["a"]}.__getitem__)


def test_cpio_holds_files_links_and_device_nodes(tmp_path):
    root = tmp_path / "root"
    (root / "bin").mkdir(parents=True)
    (root / "bin/busybox").write_bytes(b"\x7fELF")
    (root / "bin/sh").symlink_to("/bin/busybox")
    (root / "init").write_text("#!/bin/sh\n")
    (root / "init").chmod(0o755)
    archive = rootfs.cpio_newc(rootfs.tree_entries(root, devices=[("dev/console", 5, 1)]))
    listing = subprocess.run(["cpio", "-tv"], input=archive, capture_output=True, check=True)
    out = listing.stdout.decode()
    assert "bin/sh -> /bin/busybox" in out
    assert "-rwxr-xr-x" in out and " init" in out
    assert "crw-------" in out and "dev/console" in out


def test_apt_policy_output_gives_candidates():
    text = ("busybox-static:armhf:\n  Installed: (none)\n  Candidate: 1:1.35.0-4+deb12u1+b1\n"
            "lmbench:armhf:\n  Installed: (none)\n  Candidate: (none)\n")
    assert debs.parse_policy(text) == {"busybox-static": "1:1.35.0-4+deb12u1+b1",
                                         "lmbench": None}


def make_uimage(tmp_path, data=b"\0" * 4096, name="Linux-9.9.9-test"):
    src = tmp_path / "payload"
    src.write_bytes(data)
    out = tmp_path / "test.uImage"
    subprocess.run(["mkimage", "-A", "arm", "-O", "linux", "-T", "kernel", "-C", "none",
                    "-a", "0x40008000", "-e", "0x40008000", "-n", name, "-d", str(src), str(out)],
                   check=True, capture_output=True)
    return out


def test_uimage_header_is_read_like_mkimage_wrote_it(tmp_path):
    h = uimage.read(make_uimage(tmp_path))
    assert (h.name, h.release, h.data_size, h.load_addr, h.type, h.compression) == (
        "Linux-9.9.9-test", "9.9.9-test", 4096, 0x40008000, "kernel", "none")


def test_not_a_uimage_is_a_clear_error(tmp_path):
    p = tmp_path / "zImage"
    p.write_bytes(b"\0" * 128)
    with pytest.raises(uimage.UImageError, match="zImage: not a uImage"):
        uimage.read(p)


def test_a_config_option_dropped_by_kconfig_is_reported(tmp_path):
    from boardlab.kernelbuilds import fragmentcheck
    frag = tmp_path / "frag.config"
    frag.write_text("# comment\nCONFIG_ROOT_NFS=y\nCONFIG_IP_PNP=y\n")
    config = tmp_path / ".config"
    config.write_text("CONFIG_IP_PNP=y\n# CONFIG_ROOT_NFS is not set\n")
    assert fragmentcheck.unset_options(config, frag) == ["CONFIG_ROOT_NFS"]


def test_an_option_gone_in_later_kernels_is_missed_only_where_the_tree_lacks_it(tmp_path):
    """One fragment serves 6.1 to 6.12: RANDOM_TRUST_BOOTLOADER left Kconfig in 6.2."""
    from boardlab.kernelbuilds import fragmentcheck
    frag = tmp_path / "frag.config"
    frag.write_text(f"{fragmentcheck.GONE_DIRECTIVE} CONFIG_RANDOM_TRUST_BOOTLOADER\n"
                    "CONFIG_RANDOM_TRUST_BOOTLOADER=y\nCONFIG_ROOT_NFS=y\n")
    config = tmp_path / ".config"
    config.write_text("# CONFIG_ROOT_NFS is not set\n")
    later, older = tmp_path / "later", tmp_path / "older"
    (later / "drivers/char").mkdir(parents=True)
    (later / "drivers/char/Kconfig").write_text("config RANDOM_TRUST_CPU\n\tbool\n")
    (older / "drivers/char").mkdir(parents=True)
    (older / "drivers/char/Kconfig").write_text("config RANDOM_TRUST_BOOTLOADER\n\tbool \"x\"\n")
    assert fragmentcheck.unset_options(config, frag, later) == ["CONFIG_ROOT_NFS"]
    assert fragmentcheck.unset_options(config, frag, older) == ["CONFIG_RANDOM_TRUST_BOOTLOADER", "CONFIG_ROOT_NFS"]
    assert fragmentcheck.unset_options(config, frag) == ["CONFIG_RANDOM_TRUST_BOOTLOADER", "CONFIG_ROOT_NFS"]


def test_an_nfs_export_boardlab_did_not_make_is_never_emptied(tmp_path):
    """sync_tree runs as root: a non-empty directory without boardlab's mark is refused
    with its name, and keeps every file."""
    from boardlab.images.images import ForeignTreeError, SYNC_MARK, sync_tree
    src, dst = tmp_path / "src", tmp_path / "export"
    (src / "etc").mkdir(parents=True)
    (src / "etc" / "hostname").write_text("qemu-arm\n")
    dst.mkdir()
    (dst / "precious").write_text("someone's data\n")
    with pytest.raises(ForeignTreeError, match=f"{dst} is not empty and was not made by boardlab"):
        sync_tree(src, dst)
    assert (dst / "precious").read_text() == "someone's data\n"
    (dst / "precious").unlink()
    sync_tree(src, dst)                      # empty: filled, and marked
    assert (dst / SYNC_MARK).exists() and (dst / "etc" / "hostname").exists()
    (dst / "stale").write_text("x")
    sync_tree(src, dst)                      # ours: emptied and refilled
    assert not (dst / "stale").exists()


def test_two_builds_of_one_package_at_once_build_it_once(tmp_path, monkeypatch):
    """A board's images and another board's root at once (the unit tests beside the PowerPC
    board's build, on a fresh host) share a package's build directory: one make at a time,
    and the second finds it built."""
    import time
    from boardlab.images import crossbuild
    inside, builds, overlaps = [0], [], []

    def recipe(tree, out, ct):
        inside[0] += 1
        overlaps.append(inside[0] > 1)
        time.sleep(0.2)
        out.mkdir(parents=True, exist_ok=True)
        (out / "busybox").write_text("built")
        builds.append(out)
        inside[0] -= 1
        return {"bin/busybox": out / "busybox"}

    monkeypatch.setattr(crossbuild, "RECIPES", {"busybox": recipe})
    monkeypatch.setattr(crossbuild, "source_version", lambda pkg: "1:1.35.0-4")
    monkeypatch.setattr(crossbuild, "fetch_source", lambda pkg, version, cache: tmp_path / "src")
    got = _twice_at_once(lambda: crossbuild.build_userland("ppc", ["busybox"], tmp_path))
    assert overlaps == [False] and len(builds) == 1
    assert [files["bin/busybox"].read_text() for files, _ in got] == ["built", "built"]


def _twice_at_once(build) -> list:
    """build() from two threads at once -> what each got."""
    import threading
    got = []
    threads = [threading.Thread(target=lambda: got.append(build())) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return got


def test_the_programs_built_twice_at_once_compile_once(tmp_path, monkeypatch):
    """Two roots built at once on one lab host want the same CPU's programs: one compiles,
    the other waits and finds them (none removes the other's while it is in use)."""
    from boardlab.images import ownprograms
    real, calls = ownprograms._build, []
    monkeypatch.setattr(ownprograms, "_build", lambda *a: calls.append(a) or real(*a))
    got = _twice_at_once(lambda: ownprograms.build("603e", tmp_path))
    assert len(calls) == 1 and got[0] == got[1] and got[0].is_file()


def test_the_soft_float_library_built_twice_at_once_builds_once(tmp_path, monkeypatch):
    """The TQM860L's musl and soft-fp sysroot (minutes of a first run): built once, the
    second builder waits for it."""
    import time
    from boardlab.images import crossbuild, softfloat
    built = []

    def musl(src, tmp, cross, cflags):
        built.append(tmp)
        time.sleep(0.2)

    monkeypatch.setattr(softfloat, "cc_version", lambda cross: ("12", "gcc 12.2.0"))
    monkeypatch.setattr(softfloat, "_candidate", lambda pkg: "12.2.0-14")
    monkeypatch.setattr(crossbuild, "source_version", lambda pkg: "1.2.3-1")
    monkeypatch.setattr(crossbuild, "fetch_source", lambda pkg, version, cache: tmp_path / "src")
    monkeypatch.setattr(softfloat, "_gcc_softfp_tree", lambda *a: tmp_path / "gcc")
    monkeypatch.setattr(softfloat, "_musl", musl)
    monkeypatch.setattr(softfloat, "_softfp", lambda *a: None)
    monkeypatch.setattr(softfloat, "_kernel_headers", lambda *a: None)
    monkeypatch.setattr(softfloat, "_driver", lambda tmp, root, cross, cflags: (tmp / "cc").write_text("cc"))
    got = _twice_at_once(lambda: softfloat.sysroot("powerpc-linux-gnu", ("-mcpu=860",), tmp_path / "cache"))
    assert len(built) == 1 and got[0] == got[1] and (got[0] / "cc").read_text() == "cc"
