//! The graph METIS partitions: elements of the primary set are neighbours
//! when they share a target of its first map (cells sharing a node), or, if it
//! has none, when one element of another set maps to both (cells sharing an edge).

use crate::MeshDesc;

/// The primary set's dual graph in CSR form (`xadj`, `adjncy`), or `None`
/// when no map touches the primary set.
pub fn dual_graph(mesh: &MeshDesc<'_>, primary: usize) -> Option<(Vec<i32>, Vec<i32>)> {
    let n = mesh.set_sizes[primary];
    // Groups of mutually adjacent primary elements.
    let groups: Vec<Vec<u32>> = if let Some(m) = mesh.maps.iter().find(|m| m.from == primary) {
        let mut groups = vec![Vec::new(); mesh.set_sizes[m.to]];
        for p in 0..n {
            for &t in m.row(p) {
                groups[t as usize].push(p as u32);
            }
        }
        groups
    } else if let Some(m) = mesh.maps.iter().find(|m| m.to == primary) {
        (0..mesh.set_sizes[m.from])
            .map(|s| m.row(s).iter().map(|&p| p as u32).collect())
            .collect()
    } else {
        return None;
    };
    let mut adjacent: Vec<Vec<u32>> = vec![Vec::new(); n];
    for g in &groups {
        for &a in g {
            for &b in g {
                if a != b {
                    adjacent[a as usize].push(b);
                }
            }
        }
    }
    let mut xadj = Vec::with_capacity(n + 1);
    let mut adjncy = Vec::new();
    xadj.push(0);
    for list in &mut adjacent {
        list.sort_unstable();
        list.dedup();
        adjncy.extend(list.iter().map(|&x| x as i32));
        xadj.push(adjncy.len() as i32);
    }
    Some((xadj, adjncy))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MapDesc;

    #[test]
    fn cells_sharing_a_node_are_neighbours() {
        // Three cells in a strip over four nodes.
        let c2n = [0, 1, 1, 2, 2, 3];
        let mesh = MeshDesc {
            set_sizes: vec![3, 4],
            maps: vec![MapDesc {
                from: 0,
                to: 1,
                arity: 2,
                values: &c2n,
            }],
        };
        let (xadj, adjncy) = dual_graph(&mesh, 0).unwrap();
        assert_eq!(xadj, vec![0, 1, 3, 4]);
        assert_eq!(adjncy, vec![1, 0, 2, 1]);
        // Through a map into the primary set: edges joining cells.
        let e2c = [0, 1, 1, 2];
        let mesh = MeshDesc {
            set_sizes: vec![3, 2],
            maps: vec![MapDesc {
                from: 1,
                to: 0,
                arity: 2,
                values: &e2c,
            }],
        };
        assert_eq!(dual_graph(&mesh, 0).unwrap(), (vec![0, 1, 3, 4], vec![1, 0, 2, 1]));
    }
}
