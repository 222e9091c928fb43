//! Conway's Game of Life (B3/S23) on a W x H torus as op2 carriers: cells as a
//! Set, the Moore neighbourhood as a Stencil (a map of arity 8 whose entries
//! are computed, on one process and on each rank's strip of rows once
//! distributed), the state double-buffered (one loop reads the current
//! generation and writes the next, then the two Dats swap), the population a
//! Global reduction. x is the column, y the row (growing downwards); cell
//! `y * W + x`.

use op2::prelude::*;
use rayon::prelude::*;

/// The eight neighbours' offsets, in the order of the map's entries.
const MOORE: [(isize, isize); 8] = Stencil::MOORE;

/// B3/S23: born with 3 live neighbours, survives with 2 or 3.
#[op2::kernel]
pub fn life_rule(next: &mut i32, me: &i32, around: &[[i32; 1]; 8]) {
    let mut n = 0;
    for k in 0..8 {
        n += around[k][0];
    }
    *next = if n == 3 || (n == 2 && *me == 1) { 1 } else { 0 };
}

/// Adds a cell's state to the population.
#[op2::kernel]
pub fn count_alive(alive: &i32, population: &mut i64) {
    *population += *alive as i64;
}

/// A board and its generations.
pub struct Life {
    width: usize,
    height: usize,
    cells: Set,
    moore: Stencil,
    current: Dat<i32>,
    next: Dat<i32>,
    generation: usize,
}

impl Life {
    /// A `width` x `height` torus with the cells `alive` (x, y) alive.
    ///
    /// # Errors
    /// An [`op2::Error`] if the board is empty or too large for a Set, or a
    /// live cell lies outside it.
    pub fn new(width: usize, height: usize, alive: &[(usize, usize)]) -> op2::Result<Life> {
        let n = width
            .checked_mul(height)
            .filter(|&n| n > 0)
            .ok_or_else(|| op2::Error::InvalidOption {
                option: "size",
                reason: format!("a {width}x{height} board has no cells or too many"),
            })?;
        let cells = Set::new("cells", n)?;
        let moore = Stencil::torus("moore", &cells, (width, height), &MOORE)?;
        let mut state = vec![0i32; n];
        for &(x, y) in alive {
            if x >= width || y >= height {
                return Err(op2::Error::InvalidOption {
                    option: "at",
                    reason: format!("live cell ({x}, {y}) lies outside the {width}x{height} board"),
                });
            }
            state[y * width + x] = 1;
        }
        Ok(Life {
            width,
            height,
            current: Dat::from_vec("state", &cells, 1, state)?,
            next: Dat::zeros("next_state", &cells, 1)?,
            cells,
            moore,
            generation: 0,
        })
    }

    /// The board's width and height.
    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    /// Generations computed so far.
    pub fn generation(&self) -> usize {
        self.generation
    }

    /// One generation.
    pub fn step(&mut self, rt: &Runtime) -> op2::Result<()> {
        par_loop!(
            rt,
            life_rule,
            self.cells,
            self.next(WRITE),
            self.current(READ),
            self.current(READ, self.moore)
        )?;
        self.current.swap(&self.next)?;
        self.generation += 1;
        Ok(())
    }

    /// Live cells (summed over every rank in a distributed run).
    pub fn population(&self, rt: &Runtime) -> op2::Result<u64> {
        let population = Global::<i64>::scalar("population", 0);
        par_loop!(rt, count_alive, self.cells, self.current(READ), population(INC))?;
        Ok(population.value() as u64)
    }

    /// The state of every cell of this process (1 alive), in cell order.
    pub fn states(&self) -> Vec<i32> {
        self.current.to_vec()
    }

    /// The live cells (x, y) of a board on one process, row by row.
    pub fn alive(&self) -> Vec<(usize, usize)> {
        let states = self.current.data_ro();
        (0..self.width * self.height)
            .filter(|&c| states[c] == 1)
            .map(|c| (c % self.width, c / self.width))
            .collect()
    }

    /// This board spread over the ranks of `mpi`, in strips of whole rows
    /// (so that each rank's neighbourhood stays computed, and no METIS run
    /// is needed: a strip's halo is the rows above and below it).
    ///
    /// # Errors
    /// An [`op2::Error`] if there are more ranks than rows.
    #[cfg(feature = "mpi")]
    pub fn distribute(&self, mpi: &op2::mpi::Mpi) -> op2::Result<(Life, op2::mpi::Distributed)> {
        let strips = op2::mpi::Partitioner::Blocks { unit: self.width };
        let d = mpi.distribute_with(&[&self.cells], &[self.moore.map()], &[], &self.cells, &strips)?;
        let cells = d.set(&self.cells)?;
        let life = Life {
            width: self.width,
            height: self.height,
            moore: d.stencil(&self.moore)?,
            current: d.dat(&self.current)?,
            next: Dat::zeros("next_state", &cells, 1)?,
            cells,
            generation: self.generation,
        };
        Ok((life, d))
    }

    /// The current generation's Dat (for gathering a distributed board).
    pub fn current(&self) -> &Dat<i32> {
        &self.current
    }
}

/// One generation of B3/S23 on a torus, written directly in Rust: the
/// baseline the op2 version is checked and timed against.
pub fn step_by_hand(width: usize, height: usize, current: &[i32], next: &mut [i32]) {
    for y in 0..height {
        for x in 0..width {
            let mut n = 0;
            for (dx, dy) in MOORE {
                let nx = (x as isize + dx).rem_euclid(width as isize) as usize;
                let ny = (y as isize + dy).rem_euclid(height as isize) as usize;
                n += current[ny * width + nx];
            }
            let me = current[y * width + x];
            next[y * width + x] = i32::from(n == 3 || (n == 2 && me == 1));
        }
    }
}

/// One generation of B3/S23 on a torus, by hand and in parallel: the rows of
/// `next` are computed on rayon's threads (the current pool), each from the
/// rows above, at and below it in `current`, in the same `y * width + x` i32
/// layout as [`Life`]. The neighbours are found by index arithmetic instead of
/// a map; the baseline `benches/life.rs` times [`Life::step`] against.
/// Gives the same `next` as [`step_by_hand`].
///
/// # Panics
/// If `current` or `next` does not hold `width * height` cells.
pub fn step_by_hand_parallel(width: usize, height: usize, current: &[i32], next: &mut [i32]) {
    let cells = width * height;
    assert!(
        current.len() == cells && next.len() == cells,
        "a {width}x{height} board has {cells} cells, not {} and {}",
        current.len(),
        next.len()
    );
    if cells == 0 {
        return;
    }
    next.par_chunks_mut(width).enumerate().for_each(|(y, out)| {
        let row = |y: usize| &current[y * width..(y + 1) * width];
        let (up, mid, down) = (row((y + height - 1) % height), row(y), row((y + 1) % height));
        let rule = |x: usize, l: usize, r: usize| {
            let n = up[l] + up[x] + up[r] + mid[l] + mid[r] + down[l] + down[x] + down[r];
            i32::from(n == 3 || (n == 2 && mid[x] == 1))
        };
        // The columns that wrap around; every other column has both
        // neighbours in the row (a loop the compiler vectorises).
        out[0] = rule(0, width - 1, 1 % width);
        if width > 1 {
            out[width - 1] = rule(width - 1, width - 2, 0);
        }
        if width > 2 {
            // Slices of one length: no bounds checks in the loop.
            let inner = width - 2;
            let (ul, ux, ur) = (&up[..inner], &up[1..=inner], &up[2..]);
            let (ml, mx, mr) = (&mid[..inner], &mid[1..=inner], &mid[2..]);
            let (dl, dx, dr) = (&down[..inner], &down[1..=inner], &down[2..]);
            let out = &mut out[1..=inner];
            for i in 0..inner {
                let n = ul[i] + ux[i] + ur[i] + ml[i] + mr[i] + dl[i] + dx[i] + dr[i];
                // `|` and `&`, not `||` and `&&`: no branches.
                out[i] = i32::from((n == 3) | ((n == 2) & (mx[i] == 1)));
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(alive: &[(usize, usize)], w: usize, h: usize, generations: usize) -> Vec<Vec<(usize, usize)>> {
        let rt = Runtime::new(Backend::Seq).unwrap();
        let mut life = Life::new(w, h, alive).unwrap();
        let mut seen = vec![life.alive()];
        for _ in 0..generations {
            life.step(&rt).unwrap();
            seen.push(life.alive());
        }
        seen
    }

    #[test]
    fn a_blinker_blinks() {
        let seen = run(&[(1, 2), (2, 2), (3, 2)], 5, 5, 2);
        assert_eq!(seen[1], vec![(2, 1), (2, 2), (2, 3)]);
        assert_eq!(seen[2], seen[0]);
    }

    #[test]
    fn a_glider_glides_across_the_torus() {
        // After 4 generations a glider is itself moved one cell right and down;
        // on an 8x8 torus it is back after 32.
        let glider = [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)];
        let seen = run(&glider, 8, 8, 32);
        let shifted: Vec<(usize, usize)> = {
            let mut g: Vec<(usize, usize)> = glider.iter().map(|&(x, y)| (x + 1, y + 1)).collect();
            g.sort_by_key(|&(x, y)| (y, x));
            g
        };
        assert_eq!(seen[4], shifted);
        let mut start = glider.to_vec();
        start.sort_by_key(|&(x, y)| (y, x));
        assert_eq!(seen[32], start);
        assert!(seen.iter().all(|g| g.len() == 5));
    }

    #[test]
    fn the_op2_model_matches_the_hand_written_step() {
        let (w, h) = (17, 11);
        let mut rng = op2::Philox::new(3, 0, 0);
        let alive: Vec<(usize, usize)> = (0..w * h)
            .filter(|_| rng.bernoulli(0.35))
            .map(|c| (c % w, c / w))
            .collect();
        let rt = Runtime::new(Backend::Seq).unwrap();
        let mut life = Life::new(w, h, &alive).unwrap();
        let mut by_hand = life.states();
        let mut scratch = vec![0; w * h];
        for _ in 0..20 {
            life.step(&rt).unwrap();
            step_by_hand(w, h, &by_hand, &mut scratch);
            std::mem::swap(&mut by_hand, &mut scratch);
            assert_eq!(life.states(), by_hand, "generation {}", life.generation());
            assert_eq!(life.population(&rt).unwrap(), by_hand.iter().sum::<i32>() as u64);
        }
    }

    #[test]
    fn the_parallel_hand_written_step_matches_the_sequential_one() {
        // Boards of one and two columns or rows wrap onto themselves: every
        // edge case of the parallel step's column and row arithmetic.
        for (w, h) in [
            (1, 1),
            (1, 5),
            (5, 1),
            (2, 2),
            (2, 7),
            (3, 3),
            (7, 2),
            (17, 11),
            (64, 33),
        ] {
            let mut rng = op2::Philox::new(5, (w * 1000 + h) as u64, 0);
            let mut by_hand: Vec<i32> = (0..w * h).map(|_| i32::from(rng.bernoulli(0.3))).collect();
            let mut parallel = by_hand.clone();
            let (mut a, mut b) = (vec![0; w * h], vec![0; w * h]);
            for generation in 1..=12 {
                step_by_hand(w, h, &by_hand, &mut a);
                step_by_hand_parallel(w, h, &parallel, &mut b);
                std::mem::swap(&mut by_hand, &mut a);
                std::mem::swap(&mut parallel, &mut b);
                assert_eq!(parallel, by_hand, "{w}x{h}, generation {generation}");
            }
        }
    }

    #[test]
    fn bad_boards_are_errors() {
        assert!(Life::new(0, 5, &[]).is_err());
        let e = Life::new(4, 4, &[(4, 0)]).err().expect("outside the board");
        assert!(e.to_string().contains("(4, 0) lies outside the 4x4 board"), "{e}");
    }
}
