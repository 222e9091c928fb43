//! Where a Dat's valid data lives (PyOP2's five states), and the one pure
//! function per event that moves between them (docs/ARCHITECTURE.md, Backends).

/// Where the valid copy of a Dat's (or Global's) data is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum DeviceState {
    /// Only the host has memory (and data); no device buffer yet.
    #[default]
    DeviceUnallocated,
    /// Only the device has memory (and data); no host copy yet.
    HostUnallocated,
    /// The device copy is valid, the host copy stale.
    Device,
    /// The host copy is valid, the device copy stale.
    Host,
    /// Both copies are valid and equal.
    Both,
}

/// How a loop uses an argument, as far as transfers care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopUse {
    /// The loop reads the old values, or writes only some of them (an
    /// indirect WRITE), so the device needs the current data.
    pub needs_data: bool,
    /// The loop changes the data.
    pub writes: bool,
}

impl LoopUse {
    /// The use of an argument with `access`, `indirect` when reached through a map.
    pub fn of(access: crate::Access, indirect: bool) -> LoopUse {
        LoopUse {
            needs_data: access.reads() || indirect,
            writes: access.writes(),
        }
    }
}

/// What to do on the device before a loop, and the state after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopTransition {
    /// Allocate the device buffer first.
    pub allocate: bool,
    /// Copy the host data to the device.
    pub upload: bool,
    /// The state once the loop has run.
    pub after: DeviceState,
}

/// The transition for one loop argument (docs/ARCHITECTURE.md, Backends, the device states).
pub fn before_loop(state: DeviceState, use_: LoopUse) -> LoopTransition {
    use DeviceState::*;
    let (allocate, host_valid) = match state {
        DeviceUnallocated => (true, true),
        Host => (false, true),
        Device | Both | HostUnallocated => (false, false),
    };
    let upload = host_valid && use_.needs_data;
    let after = match (state, use_.writes) {
        (HostUnallocated, _) => HostUnallocated,
        (_, true) => Device,
        (Device, false) => Device,
        (_, false) => Both,
    };
    LoopTransition {
        allocate,
        upload,
        after,
    }
}

/// What a host accessor must do, and the state after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostTransition {
    /// Allocate host memory first.
    pub allocate: bool,
    /// Copy the device data to the host.
    pub download: bool,
    /// The state once the accessor has the data.
    pub after: DeviceState,
}

/// `data_ro()`: the host needs valid data; a valid device copy stays valid.
pub fn host_read(state: DeviceState) -> HostTransition {
    use DeviceState::*;
    match state {
        DeviceUnallocated | Host | Both => HostTransition {
            allocate: false,
            download: false,
            after: state,
        },
        Device => HostTransition {
            allocate: false,
            download: true,
            after: Both,
        },
        HostUnallocated => HostTransition {
            allocate: true,
            download: true,
            after: Both,
        },
    }
}

/// `data_mut()`: the host gets valid data it may change; the device copy
/// becomes stale.
pub fn host_write(state: DeviceState) -> HostTransition {
    use DeviceState::*;
    match state {
        DeviceUnallocated => HostTransition {
            allocate: false,
            download: false,
            after: DeviceUnallocated,
        },
        Host | Both => HostTransition {
            allocate: false,
            download: false,
            after: Host,
        },
        Device => HostTransition {
            allocate: false,
            download: true,
            after: Host,
        },
        HostUnallocated => HostTransition {
            allocate: true,
            download: true,
            after: Host,
        },
    }
}

/// `fill()`: the host overwrites every value, so whatever the device holds
/// is dropped, never downloaded; the device copy becomes stale.
pub fn host_overwrite(state: DeviceState) -> HostTransition {
    HostTransition {
        download: false,
        ..host_write(state)
    }
}

#[cfg(test)]
mod tests {
    use super::DeviceState::*;
    use super::*;

    const READ: LoopUse = LoopUse {
        needs_data: true,
        writes: false,
    };
    const WRITE_ALL: LoopUse = LoopUse {
        needs_data: false,
        writes: true,
    };
    const READ_WRITE: LoopUse = LoopUse {
        needs_data: true,
        writes: true,
    };

    fn t(allocate: bool, upload: bool, after: DeviceState) -> LoopTransition {
        LoopTransition {
            allocate,
            upload,
            after,
        }
    }

    // One test per row of the device-state table (docs/ARCHITECTURE.md, Backends).
    #[test]
    fn device_unallocated() {
        assert_eq!(before_loop(DeviceUnallocated, READ), t(true, true, Both));
        assert_eq!(before_loop(DeviceUnallocated, READ_WRITE), t(true, true, Device));
        assert_eq!(before_loop(DeviceUnallocated, WRITE_ALL), t(true, false, Device));
    }

    #[test]
    fn device() {
        assert_eq!(before_loop(Device, READ), t(false, false, Device));
        assert_eq!(before_loop(Device, READ_WRITE), t(false, false, Device));
        assert_eq!(before_loop(Device, WRITE_ALL), t(false, false, Device));
    }

    #[test]
    fn host() {
        assert_eq!(before_loop(Host, READ), t(false, true, Both));
        assert_eq!(before_loop(Host, READ_WRITE), t(false, true, Device));
        assert_eq!(before_loop(Host, WRITE_ALL), t(false, false, Device));
    }

    #[test]
    fn both() {
        assert_eq!(before_loop(Both, READ), t(false, false, Both));
        assert_eq!(before_loop(Both, READ_WRITE), t(false, false, Device));
        assert_eq!(before_loop(Both, WRITE_ALL), t(false, false, Device));
    }

    #[test]
    fn host_unallocated_stays_on_the_device() {
        assert_eq!(before_loop(HostUnallocated, READ), t(false, false, HostUnallocated));
        assert_eq!(
            before_loop(HostUnallocated, READ_WRITE),
            t(false, false, HostUnallocated)
        );
    }

    #[test]
    fn indirect_write_needs_the_data() {
        let u = LoopUse::of(crate::Access::Write, true);
        assert!(u.needs_data && u.writes);
        assert_eq!(before_loop(Host, u), t(false, true, Device));
        let direct = LoopUse::of(crate::Access::Write, false);
        assert_eq!(before_loop(Host, direct), t(false, false, Device));
        assert_eq!(LoopUse::of(crate::Access::Inc, false), READ_WRITE);
    }

    #[test]
    fn host_read_downloads_only_a_newer_device_copy() {
        let h = |allocate, download, after| HostTransition {
            allocate,
            download,
            after,
        };
        assert_eq!(host_read(Device), h(false, true, Both));
        assert_eq!(host_read(HostUnallocated), h(true, true, Both));
        assert_eq!(host_read(Both), h(false, false, Both));
        assert_eq!(host_read(Host), h(false, false, Host));
        assert_eq!(host_read(DeviceUnallocated), h(false, false, DeviceUnallocated));
    }

    #[test]
    fn host_write_makes_the_device_copy_stale() {
        let h = |allocate, download, after| HostTransition {
            allocate,
            download,
            after,
        };
        assert_eq!(host_write(Device), h(false, true, Host));
        assert_eq!(host_write(HostUnallocated), h(true, true, Host));
        assert_eq!(host_write(Both), h(false, false, Host));
        assert_eq!(host_write(Host), h(false, false, Host));
        assert_eq!(host_write(DeviceUnallocated), h(false, false, DeviceUnallocated));
    }
}
