//! Boids (Reynolds' flocking, as FLAME GPU's Boids example runs it) on
//! op2's model layer. `N` boids fly in a periodic box of side `W = (N /
//! density)^(1/3)`. Each step every boid sends its id, position and
//! velocity to a spatial 3D list that wraps around, then reads the boids
//! within the interaction radius `r` (the nearest image across the box's
//! faces) and steers:
//!
//! - **cohesion**: towards the mean offset of its neighbours, times
//!   `cohesion`;
//! - **alignment**: towards their mean velocity, by `alignment` times the
//!   difference from its own;
//! - **separation**: away from the mean offset of the neighbours closer
//!   than `separation_radius`, times `separation`.
//!
//! Its speed is then kept within `[min_speed, max_speed]` and it moves by
//! its velocity times `dt`, wrapping around the box. Single precision; the
//! arithmetic is `+ - * /` and `sqrt` alone (correctly rounded everywhere,
//! no fused multiply-adds), and each boid reads its neighbours in the same
//! order on every backend and rank count, so all of them compute the same
//! bits.
//!
//! [`flock_statistics`] sums each boid's speed and unit velocity in fixed
//! point (units of 2^-32) by a loop: integer sums do not depend on the
//! order they are added in, so the mean speed and the polarisation (the
//! length of the mean unit velocity: 0 for random headings, 1 for a
//! flock flying one way) are the same bits on every backend and rank count.
#![deny(missing_docs)]

use op2::model::{AgentFunction, AgentType, Agents, EnvProperty, Message, MessageKind, Model, Simulation};
use op2::prelude::*;

/// The model's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// The interaction radius `r` (the message grid's cell width).
    pub radius: f32,
    /// Neighbours closer than this push the boid away.
    pub separation_radius: f32,
    /// Steering towards the neighbours' centre.
    pub cohesion: f32,
    /// Steering towards the neighbours' mean velocity.
    pub alignment: f32,
    /// Steering away from the close neighbours.
    pub separation: f32,
    /// Least speed.
    pub min_speed: f32,
    /// Greatest speed.
    pub max_speed: f32,
    /// Time step.
    pub dt: f32,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            radius: 1.0,
            separation_radius: 0.3,
            cohesion: 0.02,
            alignment: 0.06,
            separation: 0.12,
            min_speed: 0.05,
            max_speed: 0.25,
            dt: 1.0,
        }
    }
}

impl Params {
    /// The constants the kernel reads, with the box side `side`.
    fn values(&self, side: f32) -> [f32; 9] {
        let p = self;
        [
            p.radius,
            p.separation_radius,
            p.cohesion,
            p.alignment,
            p.separation,
            p.min_speed,
            p.max_speed,
            side,
            p.dt,
        ]
    }
}

/// One boid's step: steer by its neighbours within the radius, keep its
/// speed within bounds, move, wrap around.
#[op2::kernel]
#[allow(clippy::too_many_arguments)]
pub fn flock(
    me: &i64,
    p: &mut [f32; 3],
    v: &mut [f32; 3],
    ids: &[i64],
    ps: &[[f32; 3]],
    vs: &[[f32; 3]],
    msgs: &Spatial3d,
    par: &[f32; 9],
) {
    let r = par[0];
    let sep = par[1];
    let w = par[7];
    let half = 0.5f32 * w;
    let mut centre = [0.0f32; 3];
    let mut heading = [0.0f32; 3];
    let mut away = [0.0f32; 3];
    let mut n = 0;
    let mut close = 0;
    for j in msgs.near(p[0], p[1], p[2]) {
        if ids[j] != *me {
            let mut d = [0.0f32; 3];
            for c in 0..3 {
                d[c] = ps[j][c] - p[c];
                if d[c] > half {
                    d[c] -= w;
                } else if d[c] < -half {
                    d[c] += w;
                }
            }
            let s2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            if s2 < r * r {
                n += 1;
                for c in 0..3 {
                    centre[c] += d[c];
                    heading[c] += vs[j][c];
                }
                if s2 < sep * sep {
                    close += 1;
                    for c in 0..3 {
                        away[c] -= d[c];
                    }
                }
            }
        }
    }
    if n > 0 {
        let k = n as f32;
        for c in 0..3 {
            v[c] += centre[c] / k * par[2] + (heading[c] / k - v[c]) * par[3];
        }
    }
    if close > 0 {
        let k = close as f32;
        for c in 0..3 {
            v[c] += away[c] / k * par[4];
        }
    }
    let speed = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    let mut scale = 1.0f32;
    if speed > par[6] {
        scale = par[6] / speed;
    } else if speed < par[5] && speed > 0.0 {
        scale = par[5] / speed;
    }
    for c in 0..3 {
        v[c] *= scale;
        let mut x = p[c] + v[c] * par[8];
        if x < 0.0 {
            x += w;
        }
        if x >= w {
            x -= w;
        }
        p[c] = x;
    }
}

/// Adds a boid's speed and unit velocity to `sums`, in units of 2^-32.
#[op2::kernel]
pub fn heading_sums(v: &[f32; 3], sums: &mut [i64; 4]) {
    let unit = 4294967296.0f64;
    let speed = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    sums[0] += (speed as f64 * unit) as i64;
    if speed > 0.0 {
        for c in 0..3 {
            sums[c + 1] += ((v[c] / speed) as f64 * unit) as i64;
        }
    }
}

/// The side of the box `N` boids fill at `density` boids per unit volume.
pub fn box_side(boids: usize, density: f64) -> f64 {
    (boids as f64 / density).cbrt()
}

/// Boid `i`'s start, from the counter-based streams `(seed, i, 0)`: a
/// position uniform in `[0, side)^3` and a velocity of a random direction
/// and a speed between the bounds.
pub fn initial_state(boids: usize, side: f64, seed: u64, p: &Params) -> (Vec<f32>, Vec<f32>) {
    let (mut pos, mut vel) = (Vec::with_capacity(3 * boids), Vec::with_capacity(3 * boids));
    for i in 0..boids {
        let mut s = Philox::new(seed, i as u64, 0);
        for _ in 0..3 {
            pos.push(((s.uniform_f64() * side) as f32).min(side as f32 * (1.0 - f32::EPSILON)));
        }
        // A direction uniform on the sphere: z uniform in [-1, 1], angle uniform.
        let z = 2.0 * s.uniform_f64() - 1.0;
        let a = std::f64::consts::TAU * s.uniform_f64();
        let rho = (1.0 - z * z).sqrt();
        let speed = p.min_speed as f64 + s.uniform_f64() * (p.max_speed - p.min_speed) as f64;
        vel.extend([rho * a.cos(), rho * a.sin(), z].map(|c| (c * speed) as f32));
    }
    (pos, vel)
}

/// Boids described: boids with a position and a velocity send them (and
/// their ids) to spatial list `location`, which wraps around the box, and
/// flock.
///
/// # Errors
/// [`op2::Error::InvalidModel`] if the description does not hold together
/// (a box too small for three cells of the radius along each axis is
/// refused when the simulation builds its grid).
pub fn boids_model(side: f64, params: Params) -> op2::Result<Model> {
    let mut model = Model::new("boids");
    model.add_agent(
        AgentType::new("boid")
            .variable::<f32>("pos", 3, &[0.0; 3])
            .variable::<f32>("vel", 3, &[0.0; 3]),
    )?;
    let (max, radius) = ([side; 3], f64::from(params.radius));
    let location = MessageKind::spatial_3d([0.0; 3], max, radius, true);
    model.add_message(
        Message::new("location", "boid", location)
            .carries("pos")
            .carries("vel")
            .carries_ids(),
    )?;
    model.add_environment(EnvProperty::constant("params", &params.values(side as f32)))?;
    model.add_function(AgentFunction::new("output_location", "boid").output("location"))?;
    let flock = AgentFunction::new("flock", "boid")
        .updates("pos")
        .updates("vel")
        .reads_ids();
    model.add_function(flock.input("location").environment("params", Access::Read))?;
    Ok(model)
}

/// Boids on `rt`: `agents` (ids, and positions `pos` and velocities `vel`,
/// 3 values each; in a distributed run this rank's share, see
/// `Simulation::distribute`) in a box of side `side`.
///
/// # Errors
/// As [`boids_model`] and [`Simulation::start`].
pub fn boids<'rt>(rt: &'rt Runtime, agents: Agents, side: f64, params: Params) -> op2::Result<Simulation<'rt>> {
    let mut sim = Simulation::new(&boids_model(side, params)?, rt)?;
    sim.populate("boid", agents)?;
    sim.bind("flock", |c| {
        let (me, pos, vel, par) = (
            c.ids()?,
            c.var::<f32>("pos")?,
            c.var::<f32>("vel")?,
            c.env::<f32>("params")?,
        );
        let (list, ids, m_pos, m_vel) = (
            c.input()?,
            c.message_ids()?,
            c.message::<f32>("pos")?,
            c.message::<f32>("vel")?,
        );
        par_loop!(
            c.rt(),
            flock,
            c.agents(),
            me(READ),
            pos(RW),
            vel(RW),
            ids(READ, list[..]),
            m_pos(READ, list[..]),
            m_vel(READ, list[..]),
            list(NEAR),
            par(READ)
        )
    })?;
    sim.start()?;
    Ok(sim)
}

/// The boids here: their number, and the sums of their speeds and unit
/// velocities in units of 2^-32 (as `u64` bit patterns of `i64`s, so that
/// ranks add them with wrapping sums).
///
/// # Errors
/// As the loop.
pub fn flock_statistics(sim: &Simulation<'_>) -> op2::Result<[u64; 5]> {
    let (set, vel) = (sim.population("boid")?, sim.variable::<f32>("boid", "vel")?);
    let sums = Global::<i64>::zeros("boids.sums", 4)?;
    par_loop!(sim.rt(), heading_sums, set, vel(READ), sums(INC))?;
    let s = sums.try_data_ro()?.to_vec();
    Ok([set.size() as u64, s[0] as u64, s[1] as u64, s[2] as u64, s[3] as u64])
}

/// The mean speed and the polarisation from [`flock_statistics`]'
/// (summed) values.
pub fn speed_and_polarisation(stats: [u64; 5]) -> (f64, f64) {
    let n = stats[0] as f64;
    let unit = 4294967296.0;
    let mean = |k: usize| stats[k] as i64 as f64 / unit / n;
    let (mx, my, mz) = (mean(2), mean(3), mean(4));
    (mean(1), (mx * mx + my * my + mz * mz).sqrt())
}
