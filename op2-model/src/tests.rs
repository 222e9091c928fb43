//! The model layer's descriptions, checks and derived layers.

use op2_core::{Access, Error};

use crate::{AgentFunction, AgentType, EnvProperty, Message, MessageKind, Model};

fn reason(e: Error) -> String {
    match e {
        Error::InvalidModel { reason, .. } => reason,
        other => panic!("not a model error: {other}"),
    }
}

fn spatial(dims: usize) -> MessageKind {
    MessageKind::Spatial {
        dims,
        min: [0.0; 3],
        max: [10.0; 3],
        radius: 1.0,
        wrap: true,
    }
}

/// Predators and prey: each outputs its location, reads the other's, moves,
/// and predators eat (prey die) and breed (new predators).
fn predator_prey() -> Model {
    let mut m = Model::new("predator_prey");
    for t in ["prey", "predator"] {
        m.add_agent(
            AgentType::new(t)
                .variable::<f32>("pos", 2, &[0.0; 2])
                .variable::<f32>("vel", 2, &[0.0; 2])
                .variable::<i32>("life", 1, &[10]),
        )
        .unwrap();
    }
    m.add_message(Message::new("prey_location", "prey", spatial(2)).carries("pos"))
        .unwrap();
    m.add_message(Message::new("predator_location", "predator", spatial(2)).carries("pos"))
        .unwrap();
    m.add_environment(EnvProperty::constant::<f32>("dt", &[0.1])).unwrap();
    let functions = [
        AgentFunction::new("prey_output", "prey")
            .reads("pos")
            .output("prey_location"),
        AgentFunction::new("predator_output", "predator")
            .reads("pos")
            .output("predator_location"),
        AgentFunction::new("prey_avoid", "prey")
            .updates("vel")
            .input("predator_location"),
        AgentFunction::new("predator_follow", "predator")
            .updates("vel")
            .input("prey_location"),
        AgentFunction::new("prey_move", "prey")
            .updates("pos")
            .reads("vel")
            .environment("dt", Access::Read),
        AgentFunction::new("predator_move", "predator")
            .updates("pos")
            .reads("vel")
            .environment("dt", Access::Read),
        AgentFunction::new("predator_breed", "predator")
            .updates("life")
            .births("predator")
            .deaths(),
    ];
    for f in functions {
        m.add_function(f).unwrap();
    }
    m
}

#[test]
fn independent_functions_share_a_layer() {
    let layers = predator_prey().layers().unwrap();
    assert_eq!(
        layers.to_string(),
        "layer 1: prey_output, predator_output\n\
         layer 2: prey_avoid, predator_follow\n\
         layer 3: prey_move, predator_move\n\
         layer 4: predator_breed"
    );
    assert_eq!(layers.len(), 4);
}

#[test]
fn a_message_list_orders_its_output_before_its_readers_whatever_the_declaration() {
    let mut m = Model::new("circles");
    m.add_agent(AgentType::new("circle").variable::<f32>("pos", 3, &[0.0; 3]))
        .unwrap();
    m.add_message(Message::new("location", "circle", spatial(3)).carries("pos"))
        .unwrap();
    // Declared reader first.
    m.add_function(AgentFunction::new("read", "circle").reads("pos").input("location"))
        .unwrap();
    m.add_function(AgentFunction::new("send", "circle").reads("pos").output("location"))
        .unwrap();
    assert_eq!(m.layers().unwrap().to_string(), "layer 1: send\nlayer 2: read");
}

#[test]
fn states_order_the_functions_that_move_agents_between_them() {
    let mut m = Model::new("sir");
    m.add_agent(
        AgentType::new("person")
            .variable::<u32>("days", 1, &[0])
            .states(["S", "I", "R"]),
    )
    .unwrap();
    m.add_message(Message::new("contacts", "person", MessageKind::BruteForce))
        .unwrap();
    for f in [
        AgentFunction::new("shed", "person").output("contacts"),
        AgentFunction::new("catch", "person")
            .in_state("S")
            .input("contacts")
            .moves_to("I"),
        AgentFunction::new("recover", "person")
            .in_state("I")
            .updates("days")
            .moves_to("R"),
    ] {
        m.add_function(f).unwrap();
    }
    assert_eq!(
        m.layers().unwrap().to_string(),
        "layer 1: shed\nlayer 2: catch\nlayer 3: recover"
    );
    let e = reason(
        m.clone()
            .add_function(AgentFunction::new("die", "person").in_state("D"))
            .unwrap_err(),
    );
    assert!(e.contains("function `die`: names state `D`"), "{e}");
    // A function of a state's agents may output (only they send), and a
    // list still has one output.
    let mut both = m.clone();
    both.add_function(AgentFunction::new("shed_i", "person").in_state("I").output("contacts"))
        .unwrap();
    let e = reason(both.layers().unwrap_err());
    assert!(
        e.contains("functions `shed` and `shed_i` both output message list `contacts`"),
        "{e}"
    );
}

#[test]
fn a_cycle_is_named_with_what_each_step_goes_through() {
    let mut m = Model::new("loop");
    m.add_agent(AgentType::new("a").variable::<f64>("x", 1, &[0.0]))
        .unwrap();
    m.add_message(Message::new("l", "a", MessageKind::BruteForce)).unwrap();
    // `first` writes x, which `second` (declared after) reads; `second`
    // outputs the list `first` reads.
    m.add_function(AgentFunction::new("first", "a").updates("x").input("l"))
        .unwrap();
    m.add_function(AgentFunction::new("second", "a").reads("x").output("l"))
        .unwrap();
    let e = reason(m.layers().unwrap_err());
    assert!(e.contains("cannot be ordered"), "{e}");
    assert!(e.contains("variable `a.x`") && e.contains("message list `l`"), "{e}");
    assert!(
        e.contains("`first`") && e.contains("`second`") && e.ends_with("is a cycle"),
        "{e}"
    );
}

#[test]
fn a_list_no_function_outputs_or_two_functions_output_is_an_error() {
    let mut m = Model::new("m");
    m.add_agent(AgentType::new("a").variable::<f64>("x", 1, &[0.0]))
        .unwrap();
    m.add_message(Message::new("l", "a", MessageKind::BruteForce)).unwrap();
    m.add_function(AgentFunction::new("reader", "a").input("l")).unwrap();
    let e = reason(m.layers().unwrap_err());
    assert!(
        e.contains("function `reader` reads message list `l`, which no function outputs"),
        "{e}"
    );
    m.add_function(AgentFunction::new("one", "a").output("l")).unwrap();
    m.add_function(AgentFunction::new("two", "a").output("l")).unwrap();
    let e = reason(m.layers().unwrap_err());
    assert!(e.contains("`one` and `two` both output message list `l`"), "{e}");
}

#[test]
fn a_variable_used_as_another_type_or_width_is_named() {
    let mut m = Model::new("m");
    m.add_agent(AgentType::new("a").variable::<f32>("pos", 3, &[0.0; 3]))
        .unwrap();
    let e = reason(
        m.add_function(AgentFunction::new("f", "a").uses_as::<f64>("pos", 3, Access::Rw))
            .unwrap_err(),
    );
    assert!(e.contains("uses `a.pos` as 3 f64, and it is declared as 3 f32"), "{e}");
    let e = reason(
        m.add_function(AgentFunction::new("f", "a").uses_as::<f32>("pos", 2, Access::Read))
            .unwrap_err(),
    );
    assert!(e.contains("as 2 f32") && e.contains("as 3 f32"), "{e}");
    m.add_function(AgentFunction::new("f", "a").uses_as::<f32>("pos", 3, Access::Read))
        .unwrap();
    assert!(m.functions().len() == 1);
}

#[test]
fn names_the_model_does_not_declare_are_refused() {
    let mut m = Model::new("m");
    m.add_agent(AgentType::new("a").variable::<f64>("x", 1, &[0.0]))
        .unwrap();
    let cases = [
        (AgentFunction::new("f", "b"), "runs on agent type `b`"),
        (
            AgentFunction::new("f", "a").reads("y"),
            "uses `a.y`, which is not declared",
        ),
        (AgentFunction::new("f", "a").input("l"), "reads message list `l`"),
        (AgentFunction::new("f", "a").output("l"), "outputs message list `l`"),
        (
            AgentFunction::new("f", "a").births("b"),
            "gives birth to agent type `b`",
        ),
        (
            AgentFunction::new("f", "a").environment("p", Access::Read),
            "environment property `p`",
        ),
    ];
    for (f, want) in cases {
        let e = reason(m.add_function(f).unwrap_err());
        assert!(e.contains(want), "{e}");
    }
    let e = reason(
        m.add_message(Message::new("l", "a", MessageKind::BruteForce).carries("y"))
            .unwrap_err(),
    );
    assert!(e.contains("carries `y`"), "{e}");
    let e = reason(
        m.add_message(Message::new("l", "a", spatial(3)).carries("x"))
            .unwrap_err(),
    );
    assert!(e.contains("position (3 values) first"), "{e}");
    m.add_agent(AgentType::new("b").variable::<f32>("p", 2, &[0.0; 2]))
        .unwrap();
    let backwards = MessageKind::Spatial {
        dims: 2,
        min: [0.0, 5.0, 0.0],
        max: [1.0, 4.0, 0.0],
        radius: 0.5,
        wrap: false,
    };
    let e = reason(
        m.add_message(Message::new("l", "b", backwards).carries("p"))
            .unwrap_err(),
    );
    assert!(e.contains("spans [0.0, 5.0] to [1.0, 4.0]"), "{e}");
    let empty = MessageKind::Discrete2d {
        width: 0,
        height: 3,
        range: 1,
    };
    let e = reason(m.add_message(Message::new("l", "b", empty)).unwrap_err());
    assert!(e.contains("0 x 3 lattice"), "{e}");
}

#[test]
fn declarations_that_contradict_themselves_are_refused() {
    let mut m = Model::new("m");
    let e = reason(
        m.add_agent(
            AgentType::new("a")
                .variable::<f64>("x", 1, &[0.0])
                .variable::<f64>("x", 1, &[0.0]),
        )
        .unwrap_err(),
    );
    assert!(e.contains("declares variable `x` twice"), "{e}");
    let e = reason(
        m.add_agent(AgentType::new("a").variable::<f64>("x", 2, &[0.0]))
            .unwrap_err(),
    );
    assert!(e.contains("has 2 values, and its default gives 1"), "{e}");
    m.add_agent(AgentType::new("a").variable::<i64>("x", 2, &[1, 2]))
        .unwrap();
    assert_eq!(m.agent("a").unwrap().variables()[0].default_values::<i64>(), [1, 2]);
    let e = reason(m.add_agent(AgentType::new("a")).unwrap_err());
    assert!(e.contains("agent type `a` already"), "{e}");
}

#[test]
fn macro_properties_are_updated_and_constants_read() {
    let mut m = Model::new("m");
    m.add_agent(AgentType::new("a").variable::<f64>("x", 1, &[0.0]))
        .unwrap();
    m.add_environment(EnvProperty::constant::<f64>("c", &[1.0])).unwrap();
    m.add_environment(EnvProperty::reduced::<f64>("total", 4)).unwrap();
    assert_eq!(m.environment_property("total").unwrap().len(), 4);
    let e = reason(
        m.add_function(AgentFunction::new("f", "a").environment("c", Access::Inc))
            .unwrap_err(),
    );
    assert!(e.contains("uses environment property `c` as Inc"), "{e}");
    // Two functions adding into one macro property do not share a layer.
    m.add_function(
        AgentFunction::new("f", "a")
            .reads("x")
            .environment("total", Access::Inc),
    )
    .unwrap();
    m.add_function(
        AgentFunction::new("g", "a")
            .reads("x")
            .environment("total", Access::Inc),
    )
    .unwrap();
    m.add_function(AgentFunction::new("h", "a").reads("x").environment("c", Access::Read))
        .unwrap();
    assert_eq!(m.layers().unwrap().to_string(), "layer 1: f, h\nlayer 2: g");
}

#[test]
fn given_layers_are_checked_against_the_dependencies() {
    let mut m = predator_prey();
    m.set_layers([
        vec!["prey_output", "predator_output"],
        vec!["prey_avoid", "predator_follow"],
        vec!["prey_move", "predator_move"],
        vec!["predator_breed"],
    ]);
    assert_eq!(m.layers().unwrap().len(), 4);
    m.set_layers([
        vec!["prey_output", "predator_output", "prey_avoid"],
        vec!["predator_follow", "prey_move", "predator_move", "predator_breed"],
    ]);
    let e = reason(m.layers().unwrap_err());
    assert!(
        e.contains(
            "`prey_avoid` (layer 1) depends on `predator_output` (layer 1) through message list `predator_location`"
        ),
        "{e}"
    );
    m.set_layers([vec!["prey_output"]]);
    let e = reason(m.layers().unwrap_err());
    assert!(e.contains("function `predator_output` is in no layer"), "{e}");
    m.set_layers([vec!["nobody"]]);
    assert!(reason(m.layers().unwrap_err()).contains("`nobody`"));
}
