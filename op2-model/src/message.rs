//! A message list as a modeller declares it: who sends (an agent type), what
//! each message carries (variables of the sender), and how readers find
//! theirs (FLAME GPU's brute force, spatial 2D/3D and discrete 2D
//! messages). In op2 a list is built from its senders' Dats
//! (`op2_agents::MessageList`); the function that outputs it is the one
//! after which the build runs.

/// How readers find their messages.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MessageKind {
    /// Every reader reads every message.
    BruteForce,
    /// Messages binned by position on a grid of `dims` (2 or 3) dimensions
    /// spanning `min` to `max`, whose cells are `radius` wide; readers read
    /// their cell and the neighbouring ones.
    Spatial {
        /// 2 or 3.
        dims: usize,
        /// The grid's lower corner (the first `dims` values count).
        min: [f64; 3],
        /// Its upper corner.
        max: [f64; 3],
        /// The interaction radius (the cell width).
        radius: f64,
        /// Whether the grid wraps around (a torus) or clamps positions
        /// to its edges.
        wrap: bool,
    },
    /// Messages on the cells of a `width` × `height` lattice; readers read
    /// the cells within `range` of their own: a kernel's `within(x, y, r)`
    /// reads `min(r, range)` cells around (under `mpirun`, the ghosts
    /// cover that far).
    Discrete2d {
        /// Cells across.
        width: usize,
        /// Cells down.
        height: usize,
        /// How many cells away a reader reads.
        range: usize,
    },
}

impl MessageKind {
    /// A spatial 2D list over `min` to `max`, cells `radius` wide,
    /// wrapping around (a torus) or clamping at the edges.
    pub fn spatial_2d(min: [f64; 2], max: [f64; 2], radius: f64, wrap: bool) -> MessageKind {
        let (min, max) = ([min[0], min[1], 0.0], [max[0], max[1], 0.0]);
        MessageKind::Spatial {
            dims: 2,
            min,
            max,
            radius,
            wrap,
        }
    }

    /// A spatial 3D list over `min` to `max`, cells `radius` wide,
    /// wrapping around or clamping at the edges.
    pub fn spatial_3d(min: [f64; 3], max: [f64; 3], radius: f64, wrap: bool) -> MessageKind {
        MessageKind::Spatial {
            dims: 3,
            min,
            max,
            radius,
            wrap,
        }
    }
}

/// A message list.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub(crate) name: String,
    pub(crate) sender: String,
    pub(crate) carried: Vec<String>,
    /// Whether each message also carries its sender's id.
    pub(crate) ids: bool,
    /// Whether each message also carries its sender's state.
    pub(crate) states: bool,
    pub(crate) kind: MessageKind,
}

impl Message {
    /// A list called `name` whose messages agents of type `sender` send,
    /// found as `kind` says, carrying nothing yet.
    pub fn new(name: impl Into<String>, sender: impl Into<String>, kind: MessageKind) -> Message {
        Message {
            name: name.into(),
            sender: sender.into(),
            carried: Vec::new(),
            ids: false,
            states: false,
            kind,
        }
    }

    /// Each message also carries the sender's `variable`. A spatial list's
    /// first carried variable is the senders' position.
    pub fn carries(mut self, variable: impl Into<String>) -> Message {
        self.carried.push(variable.into());
        self
    }

    /// Each message also carries its sender's id (the population's `i64`
    /// id, which children get new ones of): readers tell the senders apart,
    /// or their own message from the others'.
    pub fn carries_ids(mut self) -> Message {
        self.ids = true;
        self
    }

    /// Each message also carries its sender's state (an `i32`: the state's
    /// place in the sender type's states), for readers that tell states
    /// apart (the infected among the neighbours).
    pub fn carries_state(mut self) -> Message {
        self.states = true;
        self
    }

    /// Whether messages carry their senders' ids.
    pub fn carries_sender_ids(&self) -> bool {
        self.ids
    }

    /// The list's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The agent type that sends.
    pub fn sender(&self) -> &str {
        &self.sender
    }

    /// The sender's variables each message carries.
    pub fn carried(&self) -> &[String] {
        &self.carried
    }

    /// How readers find their messages.
    pub fn kind(&self) -> MessageKind {
        self.kind
    }
}
